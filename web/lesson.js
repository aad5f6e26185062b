// The lesson page's three viewers (no inline script: the page works under a strict CSP).
window.lessonViewers = Promise.all([
  AttnViz.mount('#seed002', { example: 'seed002', view: 'steps', embed: true }),
  AttnViz.mount('#seed004', { example: 'seed004', view: 'heatmap', embed: true }),
  AttnViz.mount('#translation', { view: 'translate', embed: true }),
]);
