// attnviz embed API. Include attnviz.js (the WASM loader) and this file, then:
//
//   const viewer = await AttnViz.mount(element, { example: 'seed002', view: 'heatmap', embed: true });
//   viewer.command('step 2');      // run an app command; resolves to '' or an error message
//   viewer.describe();             // what is on screen, as an object (tokens, heatmap geometry, ...)
//   viewer.openFile(file);         // open a File/Blob (attention JSON or NPZ)
//
// Each mount gets its own canvas and its own WebAssembly instance. See docs/EMBED.md.
(function (global) {
  'use strict';

  function hasWebGL2() {
    try {
      const c = document.createElement('canvas');
      return !!(global.WebGL2RenderingContext && c.getContext('webgl2'));
    } catch (e) {
      return false;
    }
  }

  function scriptBase() {
    const s = document.currentScript;
    if (s && s.src) return s.src.replace(/[^/]*$/, '');
    return '';
  }
  const BASE = scriptBase();

  function overlay(parent, cls, html) {
    const d = document.createElement('div');
    d.className = 'attnviz-overlay ' + cls;
    d.innerHTML = html;
    parent.appendChild(d);
    return d;
  }

  function mount(element, options) {
    options = options || {};
    if (typeof element === 'string') element = document.querySelector(element);
    if (!element) return Promise.reject(new Error('attnviz: mount element not found'));
    element.classList.add('attnviz-host');
    if (getComputedStyle(element).position === 'static') element.style.position = 'relative';

    if (!hasWebGL2()) {
      overlay(element, 'attnviz-error',
        '<b>attnviz needs WebGL2.</b><br>This browser (or its settings) does not provide WebGL2. ' +
        'Try a current Firefox, Chrome, Edge or Safari, and check that hardware acceleration is on.');
      return Promise.reject(new Error('attnviz: WebGL2 is not available'));
    }
    if (typeof global.createAttnviz !== 'function') {
      overlay(element, 'attnviz-error', '<b>attnviz could not load.</b><br>attnviz.js is missing from the page.');
      return Promise.reject(new Error('attnviz: attnviz.js not loaded'));
    }

    const canvas = document.createElement('canvas');
    canvas.className = 'attnviz-canvas';
    canvas.tabIndex = 0;  // focusable: an embedded viewer takes keys only while it has focus
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('mousedown', () => canvas.focus());
    // Keys that would scroll the page go to the viewer while it has focus.
    canvas.addEventListener('keydown', (e) => {
      if ([' ', 'ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End'].includes(e.key)) e.preventDefault();
    });
    if (!options.embed) setTimeout(() => canvas.focus(), 0);
    element.appendChild(canvas);
    const loading = overlay(element, 'attnviz-loading',
      '<div class="attnviz-spinner"></div><div>Loading attnviz&hellip;</div>');

    let firstFrame;
    const firstFramePromise = new Promise((resolve) => { firstFrame = resolve; });
    return global.createAttnviz({
      canvas: canvas,
      attnvizOptions: { example: options.example || '', view: options.view || '', embed: !!options.embed },
      locateFile: (path) => (options.base || BASE) + path,
      onFirstFrame: () => { loading.remove(); firstFrame(); },
      onFatal: (msg) => {
        loading.remove();
        overlay(element, 'attnviz-error', '<b>attnviz stopped:</b> ' + String(msg).replace(/</g, '&lt;'));
      },
      print: (t) => console.log(t),
      printErr: (t) => console.warn(t),
    }).then((Module) => firstFramePromise.then(() => {
      const cmd = Module.cwrap('attnviz_command', 'string', ['string']);
      const describe = Module.cwrap('attnviz_describe', 'string', []);
      const viewer = {
        module: Module,
        canvas: canvas,
        command: (c) => cmd(String(c)),
        describe: () => JSON.parse(describe()),
        frameCpuMs: () => Module._attnviz_frame_cpu_ms(),
        openFile: (file) => file.arrayBuffer().then((buf) => {
          const bytes = new Uint8Array(buf);
          const p = Module._malloc(Math.max(1, bytes.length));
          Module.HEAPU8.set(bytes, p);
          Module.ccall('attnviz_open_file', null, ['string', 'number', 'number'], [file.name || 'file', p, bytes.length]);
          Module._free(p);
        }),
      };
      // Drop a file on the viewer to open it.
      element.addEventListener('dragover', (e) => { e.preventDefault(); element.classList.add('attnviz-drop'); });
      element.addEventListener('dragleave', () => element.classList.remove('attnviz-drop'));
      element.addEventListener('drop', (e) => {
        e.preventDefault();
        element.classList.remove('attnviz-drop');
        for (const f of e.dataTransfer.files) viewer.openFile(f);
      });
      return viewer;
    }));
  }

  global.AttnViz = { mount: mount, hasWebGL2: hasWebGL2 };
})(typeof window !== 'undefined' ? window : globalThis);
