// Wharf web UI: small improvements over pages that work without a script.
'use strict';
document.documentElement.classList.add('js');

document.addEventListener('DOMContentLoaded', () => {
  // Copy buttons: copy the value of the field they name.
  for (const button of document.querySelectorAll('[data-copy]')) {
    button.addEventListener('click', async () => {
      const field = document.querySelector(button.dataset.copy);
      if (!field) return;
      field.select();
      try {
        await navigator.clipboard.writeText(field.value);
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Press Ctrl+C';
      }
    });
  }

  // A field that counts only while a box is checked ("Sync every" with "Keep in sync") is disabled while it is not; the server ignores it then anyway.
  for (const field of document.querySelectorAll('[data-enabled-by]')) {
    const box = document.getElementById(field.dataset.enabledBy);
    if (!box) continue;
    const follow = () => {
      field.disabled = !box.checked;
    };
    box.addEventListener('change', follow);
    follow();
  }

  // A page with pending deliveries updates itself: it is fetched again and each [data-live] part takes
  // its new content in place (the parts that change are aria-live regions, so the change is announced),
  // until nothing is pending. A part holding the keyboard focus is left alone until focus moves on.
  const pending = document.querySelector('[data-reload-after]');
  if (pending) {
    const wait = Number(pending.dataset.reloadAfter) || 3000;
    const step = async () => {
      let done = false;
      try {
        const res = await fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } });
        if (res.ok && !res.redirected) {
          const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
          let held = false;
          for (const part of document.querySelectorAll('[data-live]')) {
            const fresh = doc.querySelector(`[data-live="${part.dataset.live}"]`);
            if (!fresh || fresh.innerHTML === part.innerHTML) continue;
            if (part.contains(document.activeElement)) held = true;
            else part.innerHTML = fresh.innerHTML;
          }
          done = !held && !doc.querySelector('[data-reload-after]');
        }
      } catch {
        // the server may be restarting: try again
      }
      if (!done) setTimeout(step, wait);
    };
    setTimeout(step, wait);
  }

  // An import's page polls the job's status while it runs: the live region reads out each new
  // phase; at the end the page's new parts (result, or reason and retry) are swapped in and
  // the live region reads out the result (a reload would announce nothing).
  const poll = document.querySelector('[data-poll]');
  if (poll) {
    const field = (name) => poll.querySelector(`[data-field="${name}"]`);
    const finish = async () => {
      const res = await fetch(location.href, { credentials: 'same-origin' });
      if (!res.ok) return location.reload();
      const next = new DOMParser().parseFromString(await res.text(), 'text/html');
      for (const old of poll.querySelectorAll('[data-swap]')) {
        const fresh = next.querySelector(`[data-swap="${old.dataset.swap}"]`);
        if (fresh) old.replaceWith(document.importNode(fresh, true));
        else old.remove();
      }
      const live = next.querySelector('[data-field="live"]');
      if (live && field('live')) field('live').innerHTML = live.innerHTML;
      document.title = next.title;
      poll.removeAttribute('data-poll');
    };
    const step = async () => {
      try {
        const res = await fetch(poll.dataset.poll, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
        if (res.ok) {
          const job = await res.json();
          if (job.finished) return await finish();
          const live = field('live');
          if (live && live.textContent !== job.label) live.textContent = job.label;
          const bar = field('percent');
          if (bar && job.percent !== null) {
            bar.value = job.percent;
            bar.setAttribute('aria-valuenow', String(job.percent));
          }
          if (field('details') && job.details) field('details').textContent = job.details;
        }
      } catch {
        // the server may be restarting: keep polling
      }
      setTimeout(step, 1000);
    };
    setTimeout(step, 1000);
  }
});
