// attnviz app: help on hover, shared by the views and the sidebar.
#pragma once

namespace attnviz {

void HelpTip(const char* text);     // a wrapped tooltip while the last item is hovered
void HelpMarker(const char* text);  // a "(?)" after the last item, with text on hover

}  // namespace attnviz
