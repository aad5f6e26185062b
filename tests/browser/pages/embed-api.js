// Two viewers on one page, each with its own options; the test drives them through window.viewers.
window.events = { step: [], loaded: [], error: [], hover: [] };
window.ready = Promise.all([
  AttnViz.mount('#v1', { example: 'seed002', embed: true, views: ['heatmap', 'steps'] }),
  AttnViz.mount('#v2', { example: 'translation', embed: true }),
]).then((vs) => {
  window.viewers = vs;
  for (const type of Object.keys(window.events)) vs[0].on(type, (d) => window.events[type].push(d));
});
