// TEMPORARY until the views land: describes nothing extra.
#include "app/views_extra.h"
namespace attnviz {
void AppendViewDescription(AppState*, std::string*) {}
}  // namespace attnviz
