// attnviz embed API. Include attnviz.js (the WASM loader) and this file, then:
//
//   const viewer = await AttnViz.mount(element, { example: 'seed002', view: 'heatmap', embed: true });
//   viewer.command('step 2');      // run an app command; resolves to '' or an error message
//   viewer.describe();             // what is on screen, as an object (tokens, heatmap geometry, ...)
//   viewer.openFile(file);         // open a File/Blob (attention JSON or NPZ); rejects with the reason
//   viewer.openUrl(url);           // fetch and open a file (http(s), CORS), with a progress bar
//   AttnViz.mount(element, { src: 'https://.../attention.npz' })  // open a URL once started
//   AttnViz.mount(element, { commands: ['range p99', 'step 3'] })  // commands run once the data is in
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

  // Bytes of a URL, reporting progress (0..1, or -1 when the size is unknown). Errors say what
  // went wrong: the network or CORS, an HTTP status, or an abort.
  async function fetchBytes(url, onProgress) {
    let response;
    try {
      response = await fetch(url, { mode: 'cors' });
    } catch (e) {
      throw new Error(`could not fetch ${url}: the network failed or the server does not allow this page ` +
        `to read it (CORS: it must send Access-Control-Allow-Origin)`);
    }
    if (!response.ok) throw new Error(`could not fetch ${url}: HTTP ${response.status} ${response.statusText}`.trim());
    const total = Number(response.headers.get('Content-Length')) || 0;
    if (!response.body || !response.body.getReader) {
      const buf = new Uint8Array(await response.arrayBuffer());
      onProgress(1);
      return buf;
    }
    const reader = response.body.getReader();
    const chunks = [];
    let received = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.length;
      onProgress(total ? Math.min(1, received / total) : -1, received);
    }
    const bytes = new Uint8Array(received);
    let at = 0;
    for (const c of chunks) { bytes.set(c, at); at += c.length; }
    return bytes;
  }

  // A progress bar over the viewer while a URL loads.
  function progressOverlay(parent, url) {
    const box = document.createElement('div');
    box.className = 'attnviz-progress';
    const label = document.createElement('div');
    label.textContent = 'Loading ' + url;
    const bar = document.createElement('div');
    bar.className = 'attnviz-progress-bar';
    const fill = document.createElement('div');
    fill.className = 'attnviz-progress-fill';
    bar.appendChild(fill);
    box.appendChild(label);
    box.appendChild(bar);
    parent.appendChild(box);
    return {
      set: (f, received) => {
        if (f >= 0) fill.style.width = (100 * f).toFixed(1) + '%';
        else label.textContent = 'Loading ' + url + ' (' + (received / 1048576).toFixed(1) + ' MB)';
      },
      remove: () => box.remove(),
    };
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
        // Resolves when the file is open; rejects with the reason (also shown in the status bar).
        openFile: (file) => file.arrayBuffer().then((buf) => openBytes(file.name || 'file', new Uint8Array(buf))),
        openUrl: (url) => {
          const progress = progressOverlay(element, url);
          return fetchBytes(url, progress.set).then((bytes) => {
            progress.remove();
            const name = decodeURIComponent(String(url).split(/[?#]/)[0].split('/').pop() || 'download');
            return openBytes(name, bytes);
          }, (e) => {
            progress.remove();
            Module.ccall('attnviz_show_error', null, ['string'], [e.message]);
            throw e;
          });
        },
      };
      function openBytes(name, bytes) {
        const p = Module._malloc(Math.max(1, bytes.length));
        if (!p) throw new Error(`could not open ${name}: not enough memory for ${bytes.length} bytes`);
        Module.HEAPU8.set(bytes, p);
        const err = Module.ccall('attnviz_open_file', 'string', ['string', 'number', 'number'], [name, p, bytes.length]);
        Module._free(p);
        if (err) throw new Error(err);
      }
      // Commands from the options (e.g. the page's URL: ?range=p99&step=3) run once the data is in.
      const runCommands = () => {
        for (const c of options.commands || []) {
          const err = viewer.command(c);
          if (err) console.warn(`attnviz: option "${c}": ${err}`);
        }
      };
      if (options.src) {
        viewer.openUrl(options.src).then(runCommands, (e) => console.warn('attnviz: ' + e.message));
      } else {
        runCommands();
      }
      // Drop a file on the viewer to open it.
      element.addEventListener('dragover', (e) => { e.preventDefault(); element.classList.add('attnviz-drop'); });
      element.addEventListener('dragleave', () => element.classList.remove('attnviz-drop'));
      element.addEventListener('drop', (e) => {
        e.preventDefault();
        element.classList.remove('attnviz-drop');
        for (const f of e.dataTransfer.files) viewer.openFile(f).catch((err) => console.warn('attnviz: ' + err.message));
      });
      return viewer;
    }));
  }

  global.AttnViz = { mount: mount, hasWebGL2: hasWebGL2 };
})(typeof window !== 'undefined' ? window : globalThis);
