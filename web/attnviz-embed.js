// attnviz embed API. Include attnviz.js (the WASM loader) and this file, then:
//
//   const viewer = await AttnViz.mount(element, { example: 'seed002', view: 'heatmap', embed: true });
//   viewer.command('step 2');      // run an app command; resolves to '' or an error message
//   viewer.describe();             // what is on screen, as an object (tokens, heatmap geometry, ...)
//   viewer.openFile(file);         // open a File/Blob (JSON, NPZ, NPY, safetensors); rejects with the reason
//   viewer.openUrl(url);           // fetch and open a file (http(s), CORS), with a progress bar
//                                  // (big files stream in pieces; safetensors read lazily: attnviz-lazy.js)
//   AttnViz.mount(element, { src: 'https://.../attention.npz' })  // open a URL once started
//   AttnViz.mount(element, { commands: ['range p99', 'step 3'] })  // commands run once the data is in
//   AttnViz.mount(element, { views: ['heatmap', 'steps'], data: {tokens: [...], weights: [[...]]} })
//   viewer.load({tokens, weights}) / viewer.load(url); viewer.on('step' | 'hover' | 'loaded' | 'error', fn)
//   viewer.setView / setSet / setMap / setColormap / setScale / setRange / seek / play / pause; destroy()
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

  // The response to a GET of a URL, or an error that says what went wrong: the network or CORS, or
  // an HTTP status (attnviz-lazy.js uses it too).
  async function fetchOk(url) {
    let response;
    try {
      response = await fetch(url, { mode: 'cors' });
    } catch (e) {
      throw new Error(`could not fetch ${url}: the network failed or the server does not allow this page ` +
        `to read it (CORS: it must send Access-Control-Allow-Origin)`);
    }
    if (!response.ok) throw new Error(`could not fetch ${url}: HTTP ${response.status} ${response.statusText}`.trim());
    return response;
  }

  // Bytes of a URL, reporting progress (0..1, or -1 when the size is unknown). Errors say what
  // went wrong: the network or CORS, an HTTP status, or an abort.
  async function fetchBytes(url, onProgress) {
    const response = await fetchOk(url);
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

  // attnviz-lazy.js (next to this file) reads files and URLs in pieces and safetensors lazily; it is
  // loaded on first use. A page without it (an inlined copy, an older deployment) reads files whole.
  let lazyScript = null;
  function lazyHelper(base) {
    if (global.AttnVizLazy) return Promise.resolve(global.AttnVizLazy);
    if (!lazyScript) {
      lazyScript = new Promise((resolve) => {
        const s = document.createElement('script');
        s.src = (base || BASE) + 'attnviz-lazy.js';
        s.onload = () => resolve(global.AttnVizLazy || null);
        s.onerror = () => resolve(null);
        document.head.appendChild(s);
      });
    }
    return lazyScript;
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

  // Keys reach a viewer only while its canvas has focus. Emscripten's GLFW listens on `window`
  // and swallows Tab and Backspace, so this guard (installed before any viewer, in the capture
  // phase) stops key events that are not meant for a viewer from reaching it, and lets Tab move
  // the focus out of a viewer.
  let keyGuard = false;
  function installKeyGuard() {
    if (keyGuard) return;
    keyGuard = true;
    for (const type of ['keydown', 'keypress', 'keyup']) {
      global.addEventListener(type, (e) => {
        const a = document.activeElement;
        const ours = !!(a && a.classList && a.classList.contains('attnviz-canvas'));
        if (!ours || e.key === 'Tab') e.stopImmediatePropagation();
      }, true);
    }
  }

  // One compiled WebAssembly.Module per page, whatever the number of viewers: each viewer only
  // instantiates it (its own memory). Emscripten calls this as Module.instantiateWasm(imports,
  // receive) with `this` = the viewer's Module; a Module given wasmBinary (the Python package's
  // self-contained HTML) compiles those bytes instead of fetching.
  const compiled = {};  // url -> Promise<WebAssembly.Module>
  function compileWasm(url) {
    if (!compiled[url]) {
      const fetched = () => fetch(url).then((r) => {
        if (!r.ok) throw new Error(`could not load ${url}: HTTP ${r.status}`);
        return r.arrayBuffer();
      }).then((buf) => WebAssembly.compile(buf));
      compiled[url] = WebAssembly.compileStreaming
        ? WebAssembly.compileStreaming(fetch(url)).catch((e) => (/MIME|mime|Content-Type/.test(String(e)) ? fetched() : Promise.reject(e)))
        : fetched();
    }
    return compiled[url];
  }
  function sharedInstantiate(onFail) {
    return function (imports, receive) {
      const mod = this;
      const module = mod.wasmBinary ? WebAssembly.compile(mod.wasmBinary) : compileWasm(mod.locateFile('attnviz.wasm', ''));
      module.then((m) => WebAssembly.instantiate(m, imports).then((instance) => receive(instance, m))).catch(onFail);
      return {};  // the exports arrive through receive()
    };
  }

  // Until the returned function is called, every listener added to document or window is also
  // recorded in cleanups (as a function that removes it).
  function captureListeners(cleanups) {
    const targets = [document, global];
    const own = targets.map((t) => Object.prototype.hasOwnProperty.call(t, 'addEventListener'));
    const originals = targets.map((t) => t.addEventListener);
    targets.forEach((t, i) => {
      t.addEventListener = function (type, fn, opts) {
        cleanups.push(() => t.removeEventListener(type, fn, opts));
        return originals[i].call(t, type, fn, opts);
      };
    });
    return () => targets.forEach((t, i) => {
      if (own[i]) t.addEventListener = originals[i];
      else delete t.addEventListener;
    });
  }

  // The name load(data) gives data without one (what the status bar says was opened, and the stem of
  // the exports' file names): its meta.name when that is a plain name (no path, none of the characters
  // file systems refuse, at most 80), else "attention".
  function dataName(data) {
    const n = data && data.meta && typeof data.meta.name === 'string' ? data.meta.name.trim() : '';
    return (/^[^\\/:*?"<>|\x00-\x1f]{1,80}$/.test(n) ? n : 'attention') + '.json';
  }

  // JSON text of data given as arrays (the attention file's JSON schema; Float32Arrays allowed).
  function dataToJson(data) {
    return JSON.stringify(data, (key, value) => (ArrayBuffer.isView(value) ? Array.from(value) : value));
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
    installKeyGuard();

    // Theme: 'light' or 'dark', or 'auto' (the default), which follows prefers-color-scheme.
    const schemeQuery = global.matchMedia ? global.matchMedia('(prefers-color-scheme: light)') : null;
    const autoTheme = options.theme !== 'light' && options.theme !== 'dark';
    let themeChosen = false;  // the reader picked one (View > Light theme, setTheme): stop following
    const themeNow = () => (autoTheme ? (schemeQuery && schemeQuery.matches ? 'light' : 'dark') : options.theme);
    element.classList.toggle('attnviz-light', themeNow() === 'light');

    const canvas = document.createElement('canvas');
    canvas.className = 'attnviz-canvas';
    canvas.tabIndex = 0;  // focusable: Tab moves into it; an embedded viewer takes keys only while it has focus
    const listeners = {};  // event type -> [fn]
    let Module = null;
    const wake = () => { if (Module) Module.attnvizWake = true; };
    const emit = (type, data) => { for (const fn of listeners[type] || []) fn(data); };
    const cleanups = [];
    const listen = (target, type, fn, opts) => {
      target.addEventListener(type, fn, opts);
      cleanups.push(() => target.removeEventListener(type, fn, opts));
    };
    listen(canvas, 'contextmenu', (e) => e.preventDefault());
    listen(canvas, 'mousedown', () => canvas.focus());
    // Keys that would scroll the page go to the viewer while it has focus. The arrows and Home /
    // End / Page Up / Down scroll as their keydown's default; Space scrolls as its keypress's, and
    // its keydown must stay allowed: a prevented keydown sends no keypress, and the keypress is how
    // GLFW hears the typed ' ' (a sentence typed in Translate lost its spaces).
    listen(canvas, 'keydown', (e) => {
      if (['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End', 'PageUp', 'PageDown'].includes(e.key)) {
        e.preventDefault();
      }
    });
    listen(canvas, 'keypress', (e) => { if (e.key === ' ') e.preventDefault(); });
    // Ctrl+V: the browser's paste event carries the system clipboard's text; handed to the viewer
    // before its next frame, where imgui's Ctrl+V pastes it (Emscripten's GLFW has no clipboard).
    listen(canvas, 'paste', (e) => {
      const text = e.clipboardData ? e.clipboardData.getData('text/plain') : '';
      if (text && Module) Module.ccall('attnviz_set_clipboard', null, ['string'], [text]);
    });
    // Over an embedded viewer without focus, the wheel scrolls the page (Ctrl/Cmd + wheel zooms).
    listen(canvas, 'wheel', (e) => {
      if (options.embed && document.activeElement !== canvas && !e.ctrlKey && !e.metaKey) e.stopImmediatePropagation();
      else {
        if (Module) Module.attnvizWheelMode = e.deltaMode;  // pixels, lines or pages (see main_web.cpp)
        wake();
      }
    }, { capture: true });
    for (const type of ['pointermove', 'pointerdown', 'pointerup', 'pointerleave', 'keydown', 'keyup', 'focus', 'blur'])
      listen(canvas, type, wake);
    if (!options.embed) setTimeout(() => canvas.focus(), 0);
    element.appendChild(canvas);
    const resizeObserver = typeof ResizeObserver === 'function' ? new ResizeObserver(wake) : null;
    if (resizeObserver) resizeObserver.observe(canvas);
    const loading = overlay(element, 'attnviz-loading',
      '<div class="attnviz-spinner"></div><div>Loading attnviz&hellip;</div>');

    let restoreCapture = null;
    let firstFrame, wasmFailed;
    const firstFramePromise = new Promise((resolve) => { firstFrame = resolve; });
    const wasmFailure = new Promise((resolve, reject) => { wasmFailed = reject; });
    return Promise.race([wasmFailure, global.createAttnviz({
      canvas: canvas,
      attnvizOptions: {
        example: options.example || '', view: options.view || '', embed: !!options.embed, views: options.views || [],
        theme: themeNow(), controls: options.controls !== false,
      },
      locateFile: (path) => (options.base || BASE) + path,
      instantiateWasm: sharedInstantiate((e) => wasmFailed(e)),
      // Emscripten's runtime adds listeners to document and window while main() runs (pointer-lock
      // and fullscreen handlers of its Browser object that nothing removes). Record what is added
      // between preRun and postRun (synchronous, so only this viewer's) and remove it in destroy().
      preRun: [() => { restoreCapture = captureListeners(cleanups); }],
      postRun: [() => { if (restoreCapture) restoreCapture(); restoreCapture = null; }],
      onFirstFrame: () => { loading.remove(); firstFrame(); },
      onAttnvizEvent: emit,
      onAbort: (what) => console.warn('attnviz: aborted: ' + what),
      onFatal: (msg) => {
        loading.remove();
        overlay(element, 'attnviz-error', '<b>attnviz stopped:</b> ' + String(msg).replace(/</g, '&lt;'));
      },
      print: (t) => console.log(t),
      printErr: (t) => console.warn(t),
    })]).then((mod) => {
      Module = mod;
      return firstFramePromise.then(() => makeViewer());
    }, (e) => {
      // The WebAssembly could not start: most often a Content-Security-Policy without
      // 'wasm-unsafe-eval', or a missing/corrupt attnviz.wasm. Say so in the box, not only the console.
      loading.remove();
      const msg = String((e && e.message) || e);
      const csp = /Content Security Policy|CSP|wasm-unsafe-eval|WebAssembly\.(compile|instantiate)/i.test(msg);
      const box = overlay(element, 'attnviz-error', '');
      const title = document.createElement('b');
      title.textContent = 'attnviz could not start.';
      const text = document.createElement('div');
      text.textContent = csp
        ? "This page's Content-Security-Policy does not allow WebAssembly: add 'wasm-unsafe-eval' to script-src."
        : msg;
      box.appendChild(title);
      box.appendChild(text);
      throw new Error('attnviz: ' + (csp ? "WebAssembly blocked by the Content-Security-Policy ('wasm-unsafe-eval')" : msg));
    });

    function makeViewer() {
      // maxMemory: the readers' memory budget and the cache of lazily read heads, bytes or "512M" / "2G"
      // (defaults: 1 GiB, and 256 MiB of heads).
      if (options.maxMemory) {
        const m = /^(\d+(?:\.\d+)?)\s*([KMG]?)i?B?$/i.exec(String(options.maxMemory));
        const unit = m ? { '': 1, K: 1024, M: 1048576, G: 1073741824 }[m[2].toUpperCase()] : 0;
        if (m) Module._attnviz_set_memory_budget(Number(m[1]) * unit);
        else console.warn(`attnviz: maxMemory "${options.maxMemory}" is not a size such as 512M`);
      }
      // Between frames, in the browser's idle time, the shown view's background work (the grid's
      // statistics) and a lazily read file's heads packed into 16 bits ahead of need, in slices of up
      // to 8 ms: with a fast renderer the page's thread idles between frames. attnviz_idle's bit 0
      // asks for a frame (the view's work shows), bit 1 only for more idle time. With nothing to do it
      // looks again after 1 s, not at every idle period (a lesson page may hold many viewers).
      // destroy() cancels what is pending, so nothing holds a destroyed viewer.
      let idleOn = true, idleTimer = 0, idleHandle = 0;
      const idle = (deadline) => {
        idleHandle = 0;
        if (!idleOn || !Module) return;
        const ms = Math.min(8, deadline.timeRemaining() - 1);
        const worked = ms >= 1 ? Module._attnviz_idle(ms) : 0;
        if (worked & 1) wake();
        if (worked || ms < 1) nextIdle();
        else idleTimer = setTimeout(nextIdle, 1000);
      };
      const nextIdle = () => {
        idleTimer = 0;
        if (typeof requestIdleCallback === 'function') idleHandle = requestIdleCallback(idle, { timeout: 500 });
        else idleTimer = setTimeout(() => idle({ timeRemaining: () => 5 }), 50);
      };
      cleanups.push(() => {
        idleOn = false;
        clearTimeout(idleTimer);
        if (idleHandle && typeof cancelIdleCallback === 'function') cancelIdleCallback(idleHandle);
      });
      nextIdle();
      const cmd = Module.cwrap('attnviz_command', 'string', ['string']);
      const describe = Module.cwrap('attnviz_describe', 'string', []);
      const run = (c) => { wake(); return cmd(String(c)); };
      // Resolves when the data is open; rejects with the reason (shown in the status bar too) and
      // fires 'error'; fires 'loaded' with the new example's id.
      const opened = (promise) => promise.then(() => {
        const d = JSON.parse(describe());
        emit('loaded', { example: d.example, sets: d.sets });
      }, (e) => {
        emit('error', { message: e.message });
        throw e;
      });
      function openBytes(name, bytes) {
        wake();
        const p = Module._malloc(Math.max(1, bytes.length));
        if (!p) throw new Error(`could not open ${name}: not enough memory for ${bytes.length} bytes`);
        Module.HEAPU8.set(bytes, p);
        const err = Module.ccall('attnviz_open_file', 'string', ['string', 'number', 'number'], [name, p, bytes.length]);
        Module._free(p);
        if (err) throw new Error(err);
      }
      // What attnviz-lazy.js needs of this viewer.
      const ctx = { Module: Module, wake: wake, openBytes: openBytes, progressOverlay: progressOverlay, element: element,
        fetchOk: fetchOk };
      function openUrl(url) {
        return lazyHelper(options.base).then((h) => (h ? h.openUrl(ctx, url) : openUrlWhole(url))).catch((e) => {
          Module.ccall('attnviz_show_error', null, ['string'], [e.message]);
          wake();
          throw e;
        });
      }
      function openUrlWhole(url) {
        const progress = progressOverlay(element, url);
        return fetchBytes(url, progress.set).then((bytes) => {
          progress.remove();
          const name = decodeURIComponent(String(url).split(/[?#]/)[0].split('/').pop() || 'download');
          return openBytes(name, bytes);
        }, (e) => {
          progress.remove();
          throw e;
        });
      }
      // Exports (PNG, GIF, WebM) live in attnviz-export.js, an ES module loaded on first use; a page
      // with everything inlined (Python's show() and to_html()) has it as window.AttnVizExport.
      const exporter = () => (global.AttnVizExport ? Promise.resolve(global.AttnVizExport)
        : import((options.base || BASE) + 'attnviz-export.js'));
      const setter = (verb) => (value) => {
        const err = run(`${verb} ${value}`);
        if (err) throw new Error(err);
      };
      const viewer = {
        module: Module,
        canvas: canvas,
        command: run,
        describe: () => JSON.parse(describe()),
        frameCpuMs: () => Module._attnviz_frame_cpu_ms(),
        frameCount: () => Module._attnviz_frame_count(),
        openFile: (file) => opened(lazyHelper(options.base).then((h) => (h ? h.openFile(ctx, file)
          : file.arrayBuffer().then((buf) => openBytes(file.name || 'file', new Uint8Array(buf)))))),
        openUrl: (url) => opened(openUrl(url)),
        // load(url) fetches; load({sets | weights, tokens | source_tokens + target_tokens, ...}) takes
        // the attention file's JSON schema with plain arrays or Float32Arrays.
        load: (data, name) => opened(typeof data === 'string' ? openUrl(data) : Promise.resolve().then(() =>
          openBytes(name || dataName(data), new TextEncoder().encode(dataToJson(data))))),
        setView: setter('view'),
        setSet: setter('set'),
        setMap: setter('map'),
        setColormap: setter('colormap'),
        setScale: setter('scale'),
        setRange: setter('range'),
        setTheme: (t) => {
          const err = run('theme ' + t);
          if (err) throw new Error(err);
          themeChosen = true;
          element.classList.toggle('attnviz-light', t === 'light');
        },
        // Blobs: the view at 1x-4x as PNG; the animation (each step held stepMs) as GIF or WebM.
        exportPng: (o) => exporter().then((m) => m.png(viewer, o)),
        exportGif: (o) => exporter().then((m) => m.gif(viewer, o)),
        exportWebm: (o) => exporter().then((m) => m.webm(viewer, o)),
        seek: setter('step'),
        play: () => run('play'),
        pause: () => run('pause'),
        // Events: 'step' {step}, 'hover' {row, col} (-1 when none), 'loaded' {example, sets}, 'error' {message}.
        on: (type, fn) => { (listeners[type] = listeners[type] || []).push(fn); return viewer; },
        off: (type, fn) => { listeners[type] = (listeners[type] || []).filter((f) => f !== fn); return viewer; },
        // Frees the GL context, the WASM instance and every listener; the element is left empty.
        destroy: () => {
          Module._attnviz_destroy();
          if (Module.attnvizTrainWorker) Module.attnvizTrainWorker.terminate();  // live training, if any
          Module.attnvizTrainWorker = null;
          const gl = canvas.getContext('webgl2');
          const lose = gl && gl.getExtension('WEBGL_lose_context');
          if (lose) lose.loseContext();
          if (resizeObserver) resizeObserver.disconnect();
          for (const c of cleanups) c();
          canvas.remove();
          element.classList.remove('attnviz-host');
          for (const k of Object.keys(listeners)) delete listeners[k];
          Module = null;
          viewer.module = null;
        },
      };
      viewer.on('theme', (e) => {  // View > Light theme
        themeChosen = true;
        element.classList.toggle('attnviz-light', e.theme === 'light');
      });
      // File > Save animation / save-gif / save-webm: the app asks the page to record and download.
      viewer.on('export', (e) => {
        const name = e.name || `attnviz.${e.format}`;  // the app's name for it (ExportStem)
        const make = e.format === 'gif' ? viewer.exportGif : viewer.exportWebm;
        make({ stepMs: e.stepMs }).then((blob) => exporter().then((m) => {
          m.download(blob, name);
          if (Module) Module.ccall('attnviz_show_note', null, ['string'], [`saved ${name}`]);  // was "recording ..." for good
          wake();
        }), (err) => Module && Module.ccall('attnviz_show_error', null, ['string'], [`${e.format} export failed: ${err.message}`]));
      });
      // Drop a file on the viewer to open it.
      listen(element, 'dragover', (e) => { e.preventDefault(); element.classList.add('attnviz-drop'); });
      listen(element, 'dragleave', () => element.classList.remove('attnviz-drop'));
      listen(element, 'drop', (e) => {
        e.preventDefault();
        element.classList.remove('attnviz-drop');
        for (const f of e.dataTransfer.files) viewer.openFile(f).catch((err) => console.warn('attnviz: ' + err.message));
      });
      if (autoTheme && schemeQuery) {  // the reader switches their system theme: follow it
        listen(schemeQuery, 'change', () => {
          if (themeChosen) return;
          element.classList.toggle('attnviz-light', themeNow() === 'light');
          run('theme ' + themeNow());
        });
      }
      // Commands from the options (e.g. the page's URL: ?range=p99&step=3) run once the data is in.
      const runCommands = () => {
        for (const c of options.commands || []) {
          const err = viewer.command(c);
          if (err) console.warn(`attnviz: option "${c}": ${err}`);
        }
      };
      if (options.src) viewer.openUrl(options.src).then(runCommands, (e) => console.warn('attnviz: ' + e.message));
      else if (options.data) viewer.load(options.data).then(runCommands, (e) => console.warn('attnviz: ' + e.message));
      else runCommands();
      return viewer;
    }
  }

  // Declarative embeds: every <div data-attnviz-src="fig.json"> (or data-attnviz-example="seed002")
  // is mounted when the page has loaded, with no script of the author's. Attributes:
  //   data-view, data-views="heatmap,steps", data-autoplay, data-commands="range p99; step 2",
  //   data-full (the sidebar and menu; embeds are compact by default).
  // The viewer ends up in element.attnvizViewer (a promise).
  function mountDeclared(root) {
    const found = (root || document).querySelectorAll('[data-attnviz-src], [data-attnviz-example]');
    for (const el of found) {
      if (el.attnvizViewer) continue;
      const d = el.dataset;
      const commands = (d.commands || '').split(';').map((c) => c.trim()).filter((c) => c);
      el.attnvizViewer = mount(el, {
        src: d.attnvizSrc || '', example: d.attnvizExample || '', view: d.view || '',
        views: d.views ? d.views.split(',').map((v) => v.trim()) : [], embed: !('full' in d),
        commands: commands.concat('autoplay' in d ? ['play'] : []), controls: d.controls !== 'false',
      });
      el.attnvizViewer.catch((e) => console.warn('attnviz: ' + e.message));
    }
  }
  if (typeof document !== 'undefined') {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => mountDeclared());
    else setTimeout(() => mountDeclared(), 0);
  }

  global.AttnViz = { mount: mount, mountDeclared: mountDeclared, hasWebGL2: hasWebGL2 };
})(typeof window !== 'undefined' ? window : globalThis);
