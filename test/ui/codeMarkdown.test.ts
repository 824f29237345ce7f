import t from 'tap';
import { renderMarkdown } from '../../src/ui/code/markdown.ts';

const base = { links: '/acme/widgets/blob/feature/x', images: '/acme/widgets/raw/feature/x', folder: ['docs', 'a b'] };
const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
const srcs = (html: string) => [...html.matchAll(/src="([^"]*)"/g)].map((m) => m[1]);

t.test('relative links and images resolve against the folder at the ref; others stay as they are', async (t) => {
  const out = renderMarkdown(
    '[a](guide.md) [b](../README.md#usage) [c](/top.md?x=1) [d](../../../../etc/passwd) [e](#here) [f](https://example.com/x) [g](//example.org/y) [h](\\\\evil.com/z)\n\n![i](img/logo.png) ![j](https://example.com/i.png)',
    base,
  ).value;
  t.same(hrefs(out), [
    '/acme/widgets/blob/feature/x/docs/a%20b/guide.md',
    '/acme/widgets/blob/feature/x/docs/README.md#usage',
    '/acme/widgets/blob/feature/x/top.md?x=1',
    '/acme/widgets/blob/feature/x/etc/passwd',
    '#here',
    'https://example.com/x',
    '//example.org/y',
    '/acme/widgets/blob/feature/x/docs/a%20b/%5Cevil.com/z',
  ]);
  t.notMatch(out, /href="[^"]*\/\/evil/, 'a backslash never leads to another host');
  t.same(srcs(out), ['/acme/widgets/raw/feature/x/docs/a%20b/img/logo.png', 'https://example.com/i.png']);
  t.match(out, /<a href="https:\/\/example.com\/x" rel="nofollow noopener noreferrer">/, 'external links are marked');
});

t.test('raw HTML is text, dangerous links are refused, headings sit under the page outline', async (t) => {
  const out = renderMarkdown(
    '# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1)) [y](vbscript:x) [z](data:text/html,<b>)\n\n###### Deep',
    base,
  ).value;
  t.notMatch(out, /<script|<img src=x/, 'no markup from the document');
  t.match(out, '&lt;script&gt;alert(1)&lt;/script&gt;');
  t.same(hrefs(out), [], 'no javascript:, vbscript: or data: link');
  t.match(out, '<h3>Title</h3>', 'the first heading is an h3, under the page h1 and the section h2');
  t.match(out, '<h4>Deep</h4>', 'a heading steps at most one level below the one before');
  const shape = renderMarkdown('## Intro\n\n### Part\n\n#### Detail\n\n## Next\n\n# Top\n\n######## not a heading').value;
  t.same(
    [...shape.matchAll(/<(h\d)>([^<]*)</g)].map((m) => `${m[1]} ${m[2]}`),
    ['h3 Intro', 'h4 Part', 'h5 Detail', 'h3 Next', 'h3 Top'],
    'a README that starts at ## keeps its shape without skipping a level',
  );
  t.match(renderMarkdown('see https://example.com').value, '<a href="https://example.com"', 'bare URLs become links');
});
