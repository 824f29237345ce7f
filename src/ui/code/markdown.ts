import MarkdownIt, { type Options, type Renderer, type Token } from 'markdown-it';
import { raw, type SafeHtml } from '../html.ts';

/** Where a document's relative links and images lead: its folder at its revision. */
export interface MarkdownBase {
  /** `/<org>/<repo>/blob/<ref>`: relative links open the file (a folder's blob address sends to its tree). */
  links: string;
  /** `/<org>/<repo>/raw/<ref>`: relative images load the bytes. */
  images: string;
  /** The document's folder, as segments from the repository's root. */
  folder: string[];
}

interface Env {
  base?: MarkdownBase;
}

// Raw HTML off: a README is text, never markup of its own. markdown-it's validateLink stays
// as it is (no javascript:, vbscript:, file: or data: but images).
const md = new MarkdownIt({ html: false, linkify: true });

/** The level of a document's first heading: under the page's own h1 and the section's h2. */
const FIRST_HEADING = 3;

const ABSOLUTE = /^([a-z][a-z0-9+.-]*:|\/\/)/i;

/** A link or image target resolved against the document's folder; absolute URLs and fragments stay as they are. */
function resolve(target: string, prefix: string, folder: string[]): string {
  if (target === '' || target.startsWith('#') || ABSOLUTE.test(target)) return target;
  const here = new URL(`http://x/${folder.map(encodeURIComponent).join('/')}${folder.length ? '/' : ''}`);
  // A leading / means the repository's root, as on other forges; `..` never climbs above it.
  const url = new URL(target, here);
  return prefix + url.pathname + url.search + url.hash;
}

function renderDefault(tokens: Token[], idx: number, options: Options, _env: Env, self: Renderer): string {
  return self.renderToken(tokens, idx, options);
}

const renderImage = md.renderer.rules.image!;

md.renderer.rules.link_open = (tokens, idx, options, env: Env, self) => {
  const token = tokens[idx];
  const href = token.attrGet('href');
  if (href !== null && env.base) token.attrSet('href', resolve(href, env.base.links, env.base.folder));
  if (href && ABSOLUTE.test(href)) token.attrSet('rel', 'nofollow noopener noreferrer');
  return renderDefault(tokens, idx, options, env, self);
};

md.renderer.rules.image = (tokens, idx, options, env: Env, self) => {
  const token = tokens[idx];
  const src = token.attrGet('src');
  if (src !== null && env.base) token.attrSet('src', resolve(src, env.base.images, env.base.folder));
  return renderImage(tokens, idx, options, env, self);
};

// Headings keep the document's shape but never skip a level of the page's outline (a
// README that starts at "##", or jumps from "#" to "###", would): each steps at most one
// below the one before it, the first is an h3, and none goes above h3 or below h6.
md.core.ruler.push('page_outline', (state) => {
  let before: { level: number; placed: number } | null = null;
  state.tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const level = Number(token.tag.slice(1));
    const placed = before ? Math.min(6, Math.max(FIRST_HEADING, before.placed + Math.min(1, level - before.level))) : FIRST_HEADING;
    before = { level, placed };
    token.tag = `h${placed}`;
    // heading_open, its inline content, heading_close.
    if (state.tokens[i + 2]?.type === 'heading_close') state.tokens[i + 2].tag = token.tag;
  });
});

/** Markdown file names: `.md` and `.markdown`, any case. */
export function isMarkdown(name: string): boolean {
  return /\.(md|markdown)$/i.test(name);
}

/** Renders Markdown (raw HTML escaped, links checked by markdown-it) with its relative links resolved against `base`. */
export function renderMarkdown(text: string, base?: MarkdownBase): SafeHtml {
  return raw(md.render(text, { base } satisfies Env));
}
