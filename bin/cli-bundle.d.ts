// Types of cli-bundle.js (plain JavaScript: it runs before TypeScript can load).
export function bundlePaths(root: string): { dir: string; bundle: string; manifest: string };
export function isFresh(root: string): boolean;
export function build(root: string): Promise<void>;
export function loadCli(root: string): Promise<typeof import('../cli/main.ts')>;
