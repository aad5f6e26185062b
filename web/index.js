// The full page (also the iframe embed): one viewer filling the window. No inline script, so the
// page works under a strict Content-Security-Policy (script-src 'self' 'wasm-unsafe-eval';
// style-src 'self').
//
// URL options (query or hash): example, view, embed=1, src=URL (an attention file to fetch),
// theme=light|dark, views=heatmap,steps, and the state: set, map, layer + head, step, colormap,
// scale, range (auto|fixed|p99|p99.9), numbers and colorbar (on|off). The page keeps the state in
// its hash, so a copied link reopens the same frame of the same view.
//
// postMessage API (for iframe embeds): the embedder lists its origins in origins=a,b. Messages
//   {attnviz: 'command', id, command: 'step 3'}  -> {attnviz: 'result', id, error: ''}
//   {attnviz: 'describe', id}                    -> {attnviz: 'result', id, describe: {...}}
//   {attnviz: 'load', id, data: {...} | url}     -> {attnviz: 'result', id, error: ''}
// and it posts {attnviz: 'event', type, data} for step, hover, loaded and error. Messages from
// other origins, or malformed ones, are ignored with a console warning.
const params = new URLSearchParams(location.search);
for (const [k, v] of new URLSearchParams(location.hash.slice(1))) params.set(k, v);  // the hash wins

const STATE = ['set', 'map', 'view', 'colormap', 'scale', 'range', 'numbers', 'colorbar', 'step'];
const commands = STATE.filter((k) => params.has(k) && !(k === 'view' && !params.get('src')))
  .map((k) => `${k} ${params.get(k)}`);
if (params.has('layer') && params.has('head')) commands.push(`layer-head ${params.get('layer')} ${params.get('head')}`);

// The state as a hash: written after changes, read back above.
function writeHash(v) {
  const d = v.describe();
  const h = new URLSearchParams();
  if (d.example.startsWith('file:')) {
    if (!params.get('src')) return;  // a dropped file: nothing a link could reopen
    h.set('src', params.get('src'));
  } else {
    h.set('example', d.example);
  }
  if (d.set) h.set('set', d.set);
  h.set('view', d.view);
  h.set('map', String(d.map));
  h.set('step', String(d.timeline.step));
  h.set('colormap', d.colormap);
  h.set('scale', d.scale);
  h.set('range', d.range);
  h.set('numbers', d.numbers ? 'on' : 'off');
  h.set('colorbar', d.colorbar ? 'on' : 'off');
  const text = '#' + h.toString();
  if (location.hash !== text) history.replaceState(null, '', location.pathname + location.search + text);
}

function listenForMessages(v) {
  const allowed = (params.get('origins') || '').split(',').map((o) => o.trim()).filter((o) => o);
  if (!allowed.length || window.parent === window) return;
  // Events go to the embedding page only when its origin is an allowed one.
  const parentOrigin = (location.ancestorOrigins && location.ancestorOrigins[0]) ||
    (document.referrer ? new URL(document.referrer).origin : '');
  const post = (msg) => { if (allowed.includes(parentOrigin)) window.parent.postMessage(msg, parentOrigin); };
  for (const type of ['step', 'hover', 'loaded', 'error']) v.on(type, (data) => post({ attnviz: 'event', type, data }));
  window.addEventListener('message', (e) => {
    if (!allowed.includes(e.origin)) {
      console.warn(`attnviz: ignored a message from ${e.origin} (not in origins=)`);
      return;
    }
    const m = e.data;
    if (!m || typeof m !== 'object' || typeof m.attnviz !== 'string') {
      console.warn('attnviz: ignored a malformed message (expected {attnviz: "command" | "describe" | "load", ...})');
      return;
    }
    const reply = (fields) => e.source.postMessage({ attnviz: 'result', id: m.id, ...fields }, e.origin);
    if (m.attnviz === 'command' && typeof m.command === 'string') reply({ error: v.command(m.command) });
    else if (m.attnviz === 'describe') reply({ describe: v.describe() });
    else if (m.attnviz === 'load' && (typeof m.data === 'object' || typeof m.data === 'string'))
      v.load(m.data).then(() => reply({ error: '' }), (err) => reply({ error: err.message }));
    else console.warn(`attnviz: ignored a malformed message of type "${m.attnviz}"`);
  });
  post({ attnviz: 'ready' });
}

window.attnvizReady = AttnViz.mount('#app', {
  example: params.get('example') || '', view: params.get('view') || '', embed: params.get('embed') === '1',
  src: params.get('src') || '', commands: commands, theme: params.get('theme') || 'auto',
  views: params.get('views') ? params.get('views').split(',') : [], controls: params.get('controls') !== '0',
}).then((v) => {
  window.attnviz = v;
  document.title = 'attnviz';
  let pending = 0;
  const later = () => { clearTimeout(pending); pending = setTimeout(() => writeHash(v), 300); };
  v.on('step', later).on('loaded', later);
  setInterval(() => writeHash(v), 2000);
  listenForMessages(v);
  return v;
}).catch((e) => { console.warn(String(e)); });
