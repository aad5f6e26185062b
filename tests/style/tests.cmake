# House-style checks that can fail: no function in the app, platform or CLI layers over ~80 lines
# (scripts/function_lengths.py prints the offenders).
if(NOT EMSCRIPTEN)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  add_test(NAME function_lengths
           COMMAND ${Python3_EXECUTABLE} "${CMAKE_SOURCE_DIR}/scripts/function_lengths.py" --limit 80
                   src/app src/platform src/cli
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
endif()
