// The tutorial's viewers, each restricted to the views its step needs. window.tutorialViewers
// resolves to them (the browser test drives it).
const steps = [
  ['#v-dictionary', {
    views: ['heatmap', 'lines'],
    data: { source_tokens: ['water (28)', 'rain (46)', 'fire (12)', 'ice (3)'], target_tokens: ['H2O'],
            weights: [[0.8, 0.2, 0.0, 0.0]] },
  }],
  ['#v-scores', { example: 'seed002', view: 'steps', views: ['steps', 'heatmap'] }],
  ['#v-self', { example: 'seed004', view: 'heatmap', views: ['heatmap', 'lines', 'steps'] }],
  ['#v-shapes', { example: 'seed000', view: 'steps', views: ['steps', 'heatmap'] }],
  ['#v-masks', { example: 'causal', view: 'heatmap', views: ['heatmap', 'compare', 'steps'] }],
  ['#v-heads', { example: 'multihead', view: 'grid', views: ['grid', 'heatmap', 'compare'] }],
  ['#v-translate', { view: 'translate', views: ['translate', 'train', 'heatmap'], commands: ['figure a'] }],
];
window.tutorialViewers = Promise.all(steps.map(([el, opts]) => AttnViz.mount(el, { embed: true, ...opts })));
