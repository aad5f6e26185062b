// The full page: one viewer filling the window. No inline script, so the page works under a
// strict Content-Security-Policy (script-src 'self' 'wasm-unsafe-eval'; style-src 'self').
// URL options: ?example=seed002&view=heatmap&embed=1, ?src=URL (an attention file to fetch and
// open), and the state: set, map, step, colormap, scale, range (auto|fixed|p99|p99.9), numbers.
const q = new URLSearchParams(location.search);
const commands = ['set', 'map', 'view', 'colormap', 'scale', 'range', 'numbers', 'step']
  .filter((k) => q.has(k) && !(k === 'view' && !q.get('src'))).map((k) => `${k} ${q.get(k)}`);
window.attnvizReady = AttnViz.mount('#app', {
  example: q.get('example') || '', view: q.get('view') || '', embed: q.get('embed') === '1',
  src: q.get('src') || '', commands: commands,
}).then((v) => { window.attnviz = v; document.title = 'attnviz'; return v; })
  .catch((e) => { console.warn(String(e)); });
