// attnviz: a shadow of the WebGL state that imgui's OpenGL3 backend reads back every frame.
//
// ImGui_ImplOpenGL3_RenderDrawData saves the GL state before drawing and restores it after:
// glGetIntegerv of the viewport, the scissor box and the blend function and equations. Chromium's
// WebGL answers those (unlike bindings and enables) with a round trip to the GPU process, which
// first finishes every command already sent. With SwiftShader (software GL, no GPU) that is the
// whole previous frame's rasterization: a grid frame's glGetIntegerv(GL_SCISSOR_BOX) blocked the
// page's thread for ~84 ms (docs/PERFORMANCE.md, "Viewer frame time", stop 25), time in which
// the page could not take a worker's floats or answer input.
//
// Every GL call of the module comes through these library functions, so a setter records what
// it sets and glGetIntegerv answers those names from the record. A name not recorded yet (the
// first query after the context was made or restored) still asks WebGL, once, and keeps the
// answer. Linked with --js-library (CMakeLists.txt); the functions replace Emscripten's own.
mergeInto(LibraryManager.library, {
  $AttnvizGLState: {
    values: {},    // GL enum -> [ints] as glGetIntegerv would write them
    context: null, // the context the values belong to (a restored context starts over)
    tracked: {
      0x0BA2: 4,  // GL_VIEWPORT
      0x0C10: 4,  // GL_SCISSOR_BOX
      0x80C8: 1,  // GL_BLEND_DST_RGB
      0x80C9: 1,  // GL_BLEND_SRC_RGB
      0x80CA: 1,  // GL_BLEND_DST_ALPHA
      0x80CB: 1,  // GL_BLEND_SRC_ALPHA
      0x8009: 1,  // GL_BLEND_EQUATION_RGB
      0x883D: 1,  // GL_BLEND_EQUATION_ALPHA
    },
    set: function(name, v) {
      if (AttnvizGLState.context !== GLctx) {
        AttnvizGLState.values = {};
        AttnvizGLState.context = GLctx;
        if (GLctx && GLctx.canvas && GLctx.canvas.addEventListener)
          GLctx.canvas.addEventListener('webglcontextrestored', function() { AttnvizGLState.values = {}; });
      }
      AttnvizGLState.values[name] = v;
    },
    blend: function(sr, dr, sa, da) {
      AttnvizGLState.set(0x80C9, [sr]);
      AttnvizGLState.set(0x80C8, [dr]);
      AttnvizGLState.set(0x80CB, [sa]);
      AttnvizGLState.set(0x80CA, [da]);
    },
    equation: function(rgb, alpha) {
      AttnvizGLState.set(0x8009, [rgb]);
      AttnvizGLState.set(0x883D, [alpha]);
    },
  },

  glViewport__deps: ['$AttnvizGLState'],
  glViewport__sig: 'viiii',
  glViewport: function(x, y, w, h) {
    GLctx.viewport(x, y, w, h);
    AttnvizGLState.set(0x0BA2, [x, y, w, h]);
  },
  glScissor__deps: ['$AttnvizGLState'],
  glScissor__sig: 'viiii',
  glScissor: function(x, y, w, h) {
    GLctx.scissor(x, y, w, h);
    AttnvizGLState.set(0x0C10, [x, y, w, h]);
  },
  glBlendFunc__deps: ['$AttnvizGLState'],
  glBlendFunc__sig: 'vii',
  glBlendFunc: function(s, d) {
    GLctx.blendFunc(s, d);
    AttnvizGLState.blend(s, d, s, d);
  },
  glBlendFuncSeparate__deps: ['$AttnvizGLState'],
  glBlendFuncSeparate__sig: 'viiii',
  glBlendFuncSeparate: function(sr, dr, sa, da) {
    GLctx.blendFuncSeparate(sr, dr, sa, da);
    AttnvizGLState.blend(sr, dr, sa, da);
  },
  glBlendEquation__deps: ['$AttnvizGLState'],
  glBlendEquation__sig: 'vi',
  glBlendEquation: function(m) {
    GLctx.blendEquation(m);
    AttnvizGLState.equation(m, m);
  },
  glBlendEquationSeparate__deps: ['$AttnvizGLState'],
  glBlendEquationSeparate__sig: 'vii',
  glBlendEquationSeparate: function(rgb, alpha) {
    GLctx.blendEquationSeparate(rgb, alpha);
    AttnvizGLState.equation(rgb, alpha);
  },

  glGetIntegerv__deps: ['$emscriptenWebGLGet', '$AttnvizGLState'],
  glGetIntegerv__sig: 'vii',
  glGetIntegerv: function(name_, p) {
    var S = AttnvizGLState, n = S.tracked[name_];
    var v = n && p && S.context === GLctx ? S.values[name_] : null;
    if (v) {
      for (var i = 0; i < n; ++i) HEAP32[(p >> 2) + i] = v[i];
      return;
    }
    emscriptenWebGLGet(name_, p, 0);
    if (n && p) {
      var got = [];
      for (var j = 0; j < n; ++j) got.push(HEAP32[(p >> 2) + j]);
      S.set(name_, got);
    }
  },
});
