// madge ships no types; this declares the part of its API (v8, lib/api.js) that imports.test.ts uses.
declare module 'madge' {
  interface MadgeConfig {
    baseDir?: string;
    fileExtensions?: string[];
    tsConfig?: string;
    detectiveOptions?: Record<string, Record<string, unknown>>;
  }
  interface MadgeResult {
    /** Each file (relative to baseDir) with the files it imports. */
    obj(): Record<string, string[]>;
    /** Each circle as the files on it, in import order. */
    circular(): string[][];
    /** `skipped`: imports that resolved to no file. */
    warnings(): { skipped: string[] };
  }
  export default function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
}
