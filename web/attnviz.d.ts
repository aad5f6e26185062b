// TypeScript declarations for attnviz-embed.js (docs/EMBED.md).

export type ViewName = 'heatmap' | 'lines' | 'grid' | 'steps' | 'compare' | 'translate' | 'train';
export type RangeMode = 'auto' | 'fixed' | 'p99' | 'p99.9';

/** One matrix: rows are queries (target tokens), columns keys (source tokens). */
export type Matrix = Array<number[] | Float32Array>;

/** The attention file's JSON schema (docs/FORMATS.md, docs/attention-file.schema.json). */
export interface AttentionData {
  format?: 'attnviz';
  version?: 1 | 2;
  tokens?: string[];
  source_tokens?: string[];
  target_tokens?: string[];
  weights?: Matrix;
  layers?: Array<{ name?: string; heads: Array<Matrix | { name?: string; weights: Matrix }> }>;
  sets?: Array<{
    name?: string;
    kind?: 'self' | 'causal' | 'cross';
    tokens?: string[];
    query_tokens?: string[];
    key_tokens?: string[];
    weights?: unknown[];
    layers?: AttentionData['layers'];
    layer_names?: string[];
    head_names?: string[];
  }>;
  tokenizer?: { space_marker?: string | null; continuation_marker?: string | null; special_tokens?: string[] };
  /** meta.name: the name load(data) gives the data when it gets none (a plain name; else 'attention'). */
  meta?: Record<string, unknown> & { name?: string };
}

export interface MountOptions {
  example?: string;
  view?: ViewName;
  views?: ViewName[];
  embed?: boolean;
  data?: AttentionData;
  src?: string;
  commands?: string[];
  theme?: 'light' | 'dark' | 'auto';
  controls?: boolean;
  maxMemory?: number | string;
  base?: string;
}

export interface ViewerEvents {
  step: { step: number };
  hover: { row: number; col: number };
  loaded: { example: string; sets: string[] };
  error: { message: string };
  /** File > Save animation (or the save-gif / save-webm command): the viewer records and downloads it itself. */
  export: { format: 'gif' | 'webm'; stepMs: number; name: string };  // name: the download's file name
  /** View > Light theme: the reader picked a theme; the viewer stops following prefers-color-scheme. */
  theme: { theme: 'light' | 'dark' };
}

export interface Viewer {
  readonly canvas: HTMLCanvasElement;
  /** Runs an app command; returns '' or the error message. */
  command(text: string): string;
  /** What is on screen (example, view, tokens, heatmaps drawn, one object per view, ...). */
  describe(): Record<string, any>;
  /** CPU milliseconds of the last frame drawn. */
  frameCpuMs(): number;
  /** Frames drawn so far: sample frameCpuMs() when it moves, so each frame counts once. */
  frameCount(): number;
  openFile(file: Blob & { name?: string }): Promise<void>;
  openUrl(url: string): Promise<void>;
  load(data: AttentionData | string, name?: string): Promise<void>;
  setView(name: ViewName): void;
  setSet(name: string): void;
  setMap(index: number): void;
  setColormap(name: 'greys' | 'viridis' | 'magma' | 'diverging'): void;
  setScale(scale: 'global' | 'row' | 'log'): void;
  setRange(range: RangeMode | string): void;
  setTheme(theme: 'light' | 'dark'): void;
  /** The current view drawn at `scale` (1-4) x the screen's resolution, labels included, as a PNG. */
  exportPng(options?: { scale?: number }): Promise<Blob>;
  /** The animation as a looping GIF (npm gifenc): one frame per decoding step, each shown `stepMs` (default 700). */
  exportGif(options?: { stepMs?: number; scale?: number }): Promise<Blob>;
  /** The animation as WebM (MediaRecorder): each decoding step held exactly `stepMs` (default 700). */
  exportWebm(options?: { stepMs?: number; scale?: number }): Promise<Blob>;
  seek(step: number): void;
  play(): string;
  pause(): string;
  on<K extends keyof ViewerEvents>(type: K, fn: (data: ViewerEvents[K]) => void): Viewer;
  off<K extends keyof ViewerEvents>(type: K, fn: (data: ViewerEvents[K]) => void): Viewer;
  destroy(): void;
}

export interface AttnVizGlobal {
  mount(element: string | HTMLElement, options?: MountOptions): Promise<Viewer>;
  hasWebGL2(): boolean;
}

declare global {
  interface Window {
    AttnViz: AttnVizGlobal;
  }
}
