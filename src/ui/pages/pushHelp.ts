import { html, type SafeHtml } from '../html.ts';

/** What an empty repository's page needs to say how to fill it. */
export interface PushHelpRepo {
  org: string;
  clone_url: string;
}

/**
 * The commands that bring every branch and tag of an existing repository here. A working
 * clone holds the source's branches as refs/remotes/origin/* and only the checked-out one
 * as a branch of its own, so `git push --mirror` from it would push the remote-tracking
 * refs as they are and one branch: the first push maps them onto branches with every tag,
 * the second adds local branches. origin/HEAD is dropped first, or the pattern would make
 * it a branch named HEAD (a negative refspec would leave the clone alone, but git 2.39's
 * push ignores one). A bare `git clone --mirror` holds them as branches, and --mirror fits it.
 */
export function pushHelp(repo: PushHelpRepo): SafeHtml {
  const working =
    `git remote add wharf ${repo.clone_url}\n` +
    `git remote set-head origin --delete\n` +
    `git push wharf 'refs/remotes/origin/*:refs/heads/*' --tags\n` +
    `git push wharf --all`;
  const mirror = `git remote add wharf ${repo.clone_url}\ngit push --mirror wharf`;
  return html`<section class="card push-help"><h2>This repository is empty</h2>
    <p>Push an existing repository, every branch and tag of it. From a working clone (the usual <code>git clone</code>), in its folder:</p>
    <pre id="push-working" tabindex="0" aria-label="Commands for a working clone">${working}</pre>
    <p class="muted">The first push sends the source's branches as the clone knows them (run <code>git fetch origin</code> first to bring them up to date) and its tags; the second, branches you made yourself (a local branch behind its source's is refused, harmlessly: the newer one is here already). <code>set-head --delete</code> keeps <code>origin/HEAD</code> from arriving as a branch named HEAD; <code>git remote set-head origin --auto</code> brings it back.</p>
    <p>From a bare clone made with <code>git clone --mirror</code>:</p>
    <pre id="push-mirror" tabindex="0" aria-label="Commands for a mirror clone">${mirror}</pre>
    <p>When git asks for credentials, give any user name and an access token as the password (the token you signed in with, or a new one from <code>wharf token create &lt;login&gt;</code>). Pushing needs membership of ${repo.org}.</p></section>`;
}
