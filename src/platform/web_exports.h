// attnviz platform (web): the C functions the page's JavaScript calls (see web/attnviz.js).
#pragma once
namespace attnviz {
class App;
App* WebApp();  // the running app, or nullptr before main() has set it up
}  // namespace attnviz
