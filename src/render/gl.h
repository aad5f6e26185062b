// attnviz render: the one place that includes OpenGL ES 3 / WebGL2 headers.
#pragma once
#include <GLES3/gl3.h>
