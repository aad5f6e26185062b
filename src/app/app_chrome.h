// attnviz app: everything around the views: theme and fonts, the menu bar, the sidebar (example,
// colour, matrix), the view tabs, the status bar, the help window and the keyboard shortcuts.
#pragma once

namespace attnviz {

struct AppState;

void ApplyStyle(bool light);        // the dark theme, or the light one
bool LightStyle();                  // the style drawn with has a light window background
void BuildFonts(float dpi_scale);   // the embedded UI font, rasterised at the DPI scale
void HandleShortcuts(AppState* s);  // Space, arrows, Home/End, 1..N, ?, Ctrl+O, Ctrl+S
void DrawMenuBar(AppState* s);      // File, Examples, View, Help (not in embeds)
void DrawSidebar(AppState* s);      // example picker, colour controls, matrix info
void DrawViewTabs(AppState* s);     // one tab per registry row; keeps s->view and the tabs in step
void DrawStatusBar(AppState* s);    // frame time, the last message, "? help"
void DrawHelpWindow(AppState* s);   // keyboard and mouse help, when open

}  // namespace attnviz
