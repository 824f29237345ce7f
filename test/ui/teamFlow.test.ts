import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { buildRepo, buildUser } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { openBrowser, screenshot, signIn, startUiWharf } from './browser.ts';

/** Clicks a link or button and waits for the page it leads to. */
async function follow(page: Page, selector: string, url: string | RegExp): Promise<void> {
  await Promise.all([page.waitForURL(url), page.click(selector)]);
}

// A team's first day, in one browser, moving only by the links the pages show: from the
// start page to a file, from the log to a diff, through an issue and a pull request, to
// its tokens and its organization's members.
t.test('a team pushes, then reads, discusses, merges and manages its repository in the browser, link by link', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'team', 'app', 'private');
  const newcomer = await buildUser(w, 'newcomer');
  const g = gitClient(t);
  const work = path.join(g.dir, 'app');
  await g.ok(['init', '-q', '-b', 'main', work]);
  fs.mkdirSync(path.join(work, 'src'));
  fs.writeFileSync(path.join(work, 'README.md'), '# App\n\nStart in `src/`.\n');
  fs.writeFileSync(path.join(work, 'src', 'main.js'), 'console.log("hello");\n');
  await g.ok(['add', '.'], { cwd: work });
  await g.ok(['commit', '-q', '-m', 'Say hello'], { cwd: work });
  fs.writeFileSync(path.join(work, 'src', 'main.js'), 'console.log("hello, team");\n');
  await g.ok(['commit', '-q', '-am', 'Greet the team'], { cwd: work });
  await g.ok(['checkout', '-q', '-b', 'feature/bye'], { cwd: work });
  fs.writeFileSync(path.join(work, 'src', 'bye.js'), 'console.log("bye");\n');
  await g.ok(['add', '.'], { cwd: work });
  await g.ok(['commit', '-q', '-m', 'Say goodbye'], { cwd: work });
  await g.ok(['push', '-q', repoUrl(w, 'team/app', w.adminToken), 'main', 'feature/bye'], { cwd: work });
  await w.pushesRecorded();
  t.equal((await w.api('POST', '/api/v1/repos/team/app/issues', { body: { title: 'Greeting too short' } })).status, 201);
  t.equal((await w.api('POST', '/api/v1/repos/team/app/pulls', { body: { title: 'Add goodbye', head: 'feature/bye', base: 'main' } })).status, 201);

  const { page } = await openBrowser(t);
  await signIn(page, w);
  // Code: the organization, the repository (README rendered), a folder, a file.
  await follow(page, 'main a[href="/team"]', `${w.url}/team`);
  await follow(page, 'main a[href="/team/app"]', `${w.url}/team/app`);
  t.match(await page.textContent('.readme'), 'Start in src/.', 'the README is rendered on the repository page');
  await follow(page, '.files a:text("src")', `${w.url}/team/app/tree/main/src`);
  await follow(page, '.files a:text("main.js")', `${w.url}/team/app/blob/main/src/main.js`);
  t.match(await page.textContent('main'), 'console.log("hello, team");', 'the file at main');

  // History: the log, a commit, its diff.
  await follow(page, 'nav.tabs a:has-text("Commits")', `${w.url}/team/app/commits/main`);
  await follow(page, '.commits a:text("Greet the team")', /\/team\/app\/commit\/[0-9a-f]{40}$/);
  const diff = (await page.textContent('main')) ?? '';
  t.match(diff, 'console.log("hello");', 'the removed line');
  t.match(diff, 'console.log("hello, team");', 'the added line');

  // An issue: from the list, commented on, closed.
  await follow(page, 'nav.tabs a:has-text("Issues")', `${w.url}/team/app/issues`);
  await follow(page, 'main a:text("Greeting too short")', `${w.url}/team/app/issues/1`);
  await page.fill('#comment-body', 'Fixed by the greeting on main.');
  await Promise.all([page.waitForURL(/\/issues\/1#comment-\d+$/), page.click('text=Comment >> nth=-1')]);
  await Promise.all([page.waitForSelector('.flash'), page.click('button:has-text("Close issue")')]);
  t.equal(await page.textContent('.thread-head .result'), 'Closed');

  // A pull request: its files, then merged from its page.
  await follow(page, 'nav.tabs a:has-text("Pull requests")', `${w.url}/team/app/pulls`);
  await follow(page, 'main a:text("Add goodbye")', `${w.url}/team/app/pulls/2`);
  t.match(await page.textContent('.files'), 'src/bye.js', 'the file it changes');
  await Promise.all([page.waitForSelector('.flash'), page.click('button:has-text("Merge pull request")')]);
  t.equal(await page.textContent('.thread-head .result'), 'Merged');
  const main = await g.ok(['ls-remote', repoUrl(w, 'team/app', w.adminToken), 'refs/heads/main']);
  t.equal(main.split('\t')[0], (await w.api('GET', '/api/v1/repos/team/app/pulls/2')).body.merge_commit_sha, 'main holds the merge');

  // A token, created and revoked.
  await follow(page, 'header.top a[href="/-/tokens"]', `${w.url}/-/tokens`);
  await page.fill('#token-name', 'ci');
  await Promise.all([page.waitForNavigation(), page.click('form[action="/-/tokens"] button[type=submit]')]);
  const token = await page.inputValue('#new-token');
  t.equal((await w.api('GET', '/api/v1/user', { token })).status, 200, 'the new token works');
  await Promise.all([page.waitForNavigation(), page.locator('tbody tr', { hasText: 'ci' }).locator('button:has-text("Revoke")').click()]);
  t.equal((await w.api('GET', '/api/v1/user', { token })).status, 401, 'revoked, it does not');

  // A member added, who then reads the private repository.
  t.equal((await w.api('GET', '/api/v1/repos/team/app', { token: newcomer.token })).status, 404, 'not before');
  await page.goto(`${w.url}/team`);
  await follow(page, 'a[href="/-/orgs/team/members"]', `${w.url}/-/orgs/team/members`);
  await page.fill('#member-login', 'newcomer');
  await Promise.all([page.waitForNavigation(), page.click('form[action="/-/orgs/team/members"] button[type=submit]')]);
  t.match(await page.textContent('tbody'), 'newcomer', 'listed among the members');
  t.equal((await w.api('GET', '/api/v1/repos/team/app', { token: newcomer.token })).status, 200, 'the new member reads the private repository');
  await screenshot(page, 'team-flow');
});
