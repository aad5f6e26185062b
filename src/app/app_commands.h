// attnviz app: commands (the embed API's command(), tests, the native --command flag) and the
// machine-readable description of the screen (describe()).
//
//   RunCommand     one command line: the app's own commands (table in app_commands.cpp), then
//                  each view's (ViewModule::RunCommand); the Status reaches the caller
//   CommandUsage   every command with its arguments, one per line
//   DescribeState  JSON of what is on screen: the example, the view, what each view drew
#pragma once
#include <string>

#include "core/status.h"

namespace attnviz {

struct AppState;

Status RunCommand(AppState* s, const std::string& line);  // e.g. "example seed002", "grid-sort entropy"
std::string CommandUsage();                               // the app's command list, for errors and docs
void DescribeState(AppState* s, std::string* out);        // app_describe.cpp

}  // namespace attnviz
