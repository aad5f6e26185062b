# Browser tests: playwright-core drives Debian's Chromium against the built web app
# (ATTNVIZ_WEB_DIR/app). Screenshots land in build/test-artifacts/.
attnviz_add_node_test(browser_skeleton "${CMAKE_SOURCE_DIR}/tests/browser/skeleton.test.mjs")
attnviz_add_node_test(browser_views "${CMAKE_SOURCE_DIR}/tests/browser/views.test.mjs")
attnviz_add_node_test(browser_models "${CMAKE_SOURCE_DIR}/tests/browser/models.test.mjs")
attnviz_add_node_test(browser_embed "${CMAKE_SOURCE_DIR}/tests/browser/embed.test.mjs")
attnviz_add_node_test(browser_src "${CMAKE_SOURCE_DIR}/tests/browser/src.test.mjs")
attnviz_add_node_test(browser_embed_api "${CMAKE_SOURCE_DIR}/tests/browser/embed_api.test.mjs")
attnviz_add_node_test(browser_csp "${CMAKE_SOURCE_DIR}/tests/browser/csp.test.mjs")
attnviz_add_node_test(browser_declarative "${CMAKE_SOURCE_DIR}/tests/browser/declarative.test.mjs")
attnviz_add_node_test(browser_deeplink "${CMAKE_SOURCE_DIR}/tests/browser/deeplink.test.mjs")
attnviz_add_node_test(browser_tutorial "${CMAKE_SOURCE_DIR}/tests/browser/tutorial.test.mjs")
attnviz_add_node_test(browser_kernels "${CMAKE_SOURCE_DIR}/tests/browser/kernels.test.mjs")
