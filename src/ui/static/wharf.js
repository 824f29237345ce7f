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

  // An import's progress page polls the job's status and reloads once it has ended.
  const poll = document.querySelector('[data-poll]');
  if (poll) {
    const set = (name, apply) => {
      const el = poll.querySelector(`[data-field="${name}"]`);
      if (el) apply(el);
    };
    const step = async () => {
      try {
        const res = await fetch(poll.dataset.poll, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
        if (res.ok) {
          const job = await res.json();
          if (job.finished) return location.reload();
          const p = job.progress || {};
          set('status', (el) => (el.textContent = job.label));
          set('percent', (el) => (el.value = Math.round(p.percent || 0)));
          set('numbers', (el) => (el.textContent = `${p.objects_received || 0} objects · ${Math.round((p.bytes_received || 0) / 1024)} KiB received`));
        }
      } catch {
        // the server may be restarting: keep polling
      }
      setTimeout(step, 1000);
    };
    setTimeout(step, 1000);
  }
});
