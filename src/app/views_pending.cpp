// TEMPORARY: views not yet written. Being replaced by view_lines.cpp, view_grid.cpp,
// view_steps.cpp, view_compare.cpp.
#include "app/app_state.h"
#include "imgui.h"

namespace attnviz {
void DrawLinesView(AppState*) { ImGui::TextDisabled("lines view: not yet written"); }
void DrawGridView(AppState*) { ImGui::TextDisabled("grid view: not yet written"); }
void DrawStepsView(AppState*) { ImGui::TextDisabled("step view: not yet written"); }
void DrawCompareView(AppState*) { ImGui::TextDisabled("compare view: not yet written"); }
}  // namespace attnviz
