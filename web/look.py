"""How every mounted page looks and behaves in the browser: the theme, CSS, head and the page's script."""

from __future__ import annotations

import gradio as gr

APP_JS = """
() => {
  // Ctrl+Enter submits: the player's script does it (assets/player/player.js, components/player.py)
  // Drafts are saved while typing; the last keystrokes before a reload or a closed tab would still be in
  // flight, so the page sends them once more as it goes away (sendBeacon survives the page).
  const fields = '#concrete-intent textarea, #concrete-intent input, #high-level-intent textarea, #high-level-intent input';
  let typed = false;
  document.addEventListener('input', (event) => { if (event.target.matches(fields)) typed = true; });
  const flushDraft = () => {
    const marker = document.querySelector('#intent-sequence');
    const concrete = document.querySelector('#concrete-intent textarea, #concrete-intent input');
    const high = document.querySelector('#high-level-intent textarea, #high-level-intent input');
    const sequence = marker ? marker.textContent.trim() : '';
    if (!typed || !sequence || !concrete || !high || !navigator.sendBeacon) return;
    const url = '/api/intent_draft';  // web/scripts.py: the same handler as the scripts' intent_draft
    const body = JSON.stringify({data: [sequence, concrete.value, high.value, Date.now()]});
    navigator.sendBeacon(url, new Blob([body], {type: 'application/json'}));
  };
  window.addEventListener('pagehide', flushDraft);
  // Gradio's toast header is a role="button" holding the Close button (axe-core: nested-interactive,
  // serious): make the header a plain region; Close stays a button, and the header still toggles on click.
  const plainToastHeaders = () => document.querySelectorAll('.toast-header[role="button"]').forEach((header) => {
    header.removeAttribute('role');
    header.removeAttribute('tabindex');
  });
  // An empty output's placeholder is a <div> named "Empty value" with no role, which axe-core finds serious
  // (aria-prohibited-attr: a name needs a role); it is an icon, so it becomes an image.
  // A table that scrolls sideways with no row (an empty table of many columns) has nothing a keyboard can focus
  // in its scrolling viewport (scrollable-region-focusable, serious): its first column header takes the focus,
  // as a grid's cell may.
  const namedRoles = () => {
    document.querySelectorAll('.empty[aria-label]:not([role])').forEach((node) => node.setAttribute('role', 'img'));
    document.querySelectorAll('.virtual-table-viewport').forEach((viewport) => {
      const first = viewport.querySelector('th[role="columnheader"]');
      if (first && viewport.scrollWidth > viewport.clientWidth && !viewport.querySelector('[tabindex="0"]')) {
        first.setAttribute('tabindex', '0');
      }
    });
  };
  new MutationObserver(() => { plainToastHeaders(); namedRoles(); }).observe(document.body, {childList: true, subtree: true});
  document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') flushDraft(); });
  // A session that ended says so (web/gate.py): once any call is refused with a 401, the page shows the one
  // sentence the server gave ("You are signed out: sign in again" / "Your role changed: reload the page") with
  // its link, and no error toast or badge.
  // Text typed once the session has ended cannot be saved: say so under the field being typed in, with the way
  // on (issue 44 §12), as soon as a save is refused and at each field typed in afterwards.
  let ended = null;
  let lastField = null;
  const textField = (el) => el && el.matches && el.matches('textarea, input[type=text], input:not([type])');
  const noteUnder = (field) => {
    if (!ended || !textField(field)) return;
    const block = field.closest('.block') || field.parentElement;
    if (!block || (block.nextElementSibling && block.nextElementSibling.classList.contains('session-ended-note'))) return;
    const note = document.createElement('div');
    note.className = 'session-ended-note';
    note.setAttribute('role', 'alert');
    const signedOut = ended.session !== 'role_changed';
    const text = document.createElement('span');
    text.textContent = (signedOut ? '⚠️ Not saved: you are signed out, so what you type here is not saved. '
      : '⚠️ Not saved: your role changed, so what you type here is not saved. ')
      + 'Copy your text, then ';
    const link = document.createElement('a');
    link.href = ended.link;
    link.textContent = signedOut ? 'Sign in' : 'Reload the page';
    const after = document.createElement('span');
    after.textContent = signedOut ? ' again and paste it (your last saved draft is kept).' : ' and paste it.';
    note.append(text, link, after);
    block.after(note);
  };
  document.addEventListener('input', (event) => {
    if (textField(event.target)) { lastField = event.target; noteUnder(event.target); }
  }, true);
  const sessionEnded = (info) => {
    document.body.classList.add('session-ended');
    ended = ended || info;
    noteUnder(textField(document.activeElement) ? document.activeElement : lastField);
    if (document.getElementById('session-ended')) return;
    const bar = document.createElement('div');
    bar.id = 'session-ended';
    bar.setAttribute('role', 'alert');
    bar.dataset.session = info.session;
    const text = document.createElement('span');
    text.textContent = info.error + ' ';
    const link = document.createElement('a');
    link.href = info.link;
    link.id = 'session-ended-link';
    link.textContent = info.session === 'role_changed' ? 'Reload the page' : 'Sign in';
    bar.append(text, link);
    document.body.prepend(bar);
  };
  const plainFetch = window.fetch.bind(window);
  window.fetch = async (...args) => {
    const response = await plainFetch(...args);
    if (response.status === 401) {
      try {
        const info = await response.clone().json();
        if (info && info.session && info.link) sessionEnded(info);
      } catch (error) { /* not the gate's answer */ }
    }
    return response;
  };
}
"""
CSS = """
#intent-progress {font-size: 0.95em} footer {visibility: hidden} #intent-sequence {display: none}
#intent-message:not(:has(p:not([hidden]))), #intent-skip-message:not(:has(p)) {display: none}
#intent-message p, #intent-skip-message p {color: #9a3412; font-weight: 600}
.dark #intent-message p {color: #fdba74}
.dark #intent-skip-message p {color: #fdba74}
/* keyboard focus shows on every text field (Gradio draws none on a focused text box) */
.gradio-container textarea:focus-visible, .gradio-container input:not([type=checkbox]):not([type=radio]):focus-visible {
  outline: 3px solid #b45309 !important; outline-offset: 1px  /* Gradio's field CSS sets outline: none */
}
.dark textarea:focus-visible {outline-color: #fbbf24 !important}
.dark input:not([type=checkbox]):not([type=radio]):focus-visible {outline-color: #fbbf24 !important}
/* toasts at the bottom, at most three, each showing its newest message (its title counts them): they no longer
   pile up over the header's Log out */
.toast-wrap {top: auto !important; bottom: var(--size-4, 16px) !important}
.toast-wrap > :nth-last-child(n+4), .toast-messages > :not(:last-child) {display: none !important}
/* the theme's accent (indigo 600) on the dark background is 3.1:1 (a selected tab's name): indigo 400 there */
.dark .gradio-container {--color-accent: #818cf8}
/* the player (assets/player/player.css) in dark mode: its own colours are light mode's. One selector per dark
   rule: Gradio prefixes custom CSS, and in a list it keeps ".dark" in front of the first selector only */
.dark .csp-watched {color: #93c5fd !important} .dark .csp-need {color: #d1d5db !important}
.dark .csp-speed {background-color: #1f2937 !important; color: #f9fafb !important; border: 1px solid #6b7280; color-scheme: dark}
.dark .csp-speed option {background: #1f2937; color: #f9fafb}
.dark .csp-keys {background: #1f2937 !important; color: #f9fafb !important; border-color: #9ca3af !important}
.dark .csp-mark {background: #1f2937 !important; color: #f9fafb !important; border-color: #9ca3af !important}
.dark .csp-mark[aria-pressed="true"] {background: #c2410c !important; border-color: #fdba74 !important; color: #fff !important}
.dark .csp-timeline {background: #111827 !important; border-color: #4b5563 !important}
.dark .csp-keylist {border-color: #4b5563}
.dark .csp-marks {border-color: #4b5563}
.dark .csp-missing {color: #7c2d12 !important; background: #fff7ed !important}
@media (hover: hover) and (pointer: fine) {.cs-ctrl-enter::after {content: "\\00a0(Ctrl+Enter)"}}
#session-ended {position: fixed; top: 0; left: 0; right: 0; z-index: 10000; padding: .8em 1.2em;
  background: #fef3c7; color: #78350f; border-bottom: 2px solid #b45309; font-weight: 600; font-size: 1.05em}
#session-ended a {color: #1e3a8a; text-decoration: underline} body.session-ended {padding-top: 3em}
body.session-ended .toast-wrap, body.session-ended .toast-body, body.session-ended [data-testid='toast-body'] {
  display: none !important
}
body.session-ended [data-testid='status-tracker']:has(> span.error),
body.session-ended .sr-only[role='status'] {display: none !important}
/* "Draft saved at ..." would be stale once saves are refused: the note under the field says what happened */
body.session-ended #intent-draft-status {display: none !important}
.session-ended-note {margin: 4px 0 8px; padding: .5em .8em; background: #fef3c7; color: #78350f;
  border-left: 4px solid #b45309; border-radius: 4px; font-weight: 600}
.session-ended-note a {color: #1e3a8a; text-decoration: underline}
#app-title h1 {font-size: 1.6em; margin: 0; overflow-wrap: normal; word-break: normal; hyphens: none}
#study-completion-code {font-size: 1.6rem; font-weight: 700; letter-spacing: .05em; padding: .3rem .8rem;
  border-radius: 6px; display: inline-block; background: var(--neutral-100); color: var(--body-text-color);
  user-select: all; -webkit-user-select: all}
.dark #study-completion-code {background: var(--neutral-800)}
@media (max-width: 640px) {
  #app-header {flex-direction: column; gap: 0.25em}
  #app-title h1 {font-size: 1.25em}
}
/* Review: one item on one 1280×900 screen (issue 44 §4; components/review/queue.py) */
#review-top {align-items: center} #review-top p, #review-item h3 {margin: 0}
#review-item-form, #review-work > .column, #review-slots {gap: 8px}
.review-slot {gap: 2px; padding: 4px 0; border-bottom: 1px solid var(--border-color-primary)}
.review-slot .wrap {flex-wrap: nowrap} .review-slot p {margin: 0; line-height: 1.35}
.review-slot textarea {border: 1px solid var(--border-color-primary); border-radius: var(--input-radius);
  background: var(--input-background-fill); padding: 6px 10px}
.review-final {gap: 8px} .review-final .block {padding: 6px 8px} .review-final span[data-testid='block-info'] {margin-bottom: 4px}
"""


# Gradio's Soft theme draws labels and the primary button in indigo 500 on indigo 100 / white (3.9-4.5:1);
# one step darker passes WCAG AA (4.5:1), which axe-core checks in tests/e2e/test_accessibility.py.
def app_theme() -> gr.themes.Base:
    return gr.themes.Soft().set(
        block_label_text_color="*primary_700",
        block_title_text_color="*primary_700",
        color_accent="*primary_600",
        body_text_color_subdued="*neutral_500",  # neutral 400 (a dropdown's placeholder, info text) is 2.5:1
        button_primary_background_fill="*primary_700",
        button_primary_background_fill_hover="*primary_600",
        # dark mode: a secondary button's name read 3.6:1 (neutral 400 on 700), also while it waits (disabled)
        button_secondary_text_color_dark="*neutral_50",
        button_secondary_text_color_hover_dark="*neutral_50",
        button_secondary_background_fill_hover_dark="*primary_600",  # white on indigo 500 is 4.3:1
        body_text_color_subdued_dark="*neutral_300",  # neutral 400 on a dark field (a dropdown's placeholder) is 4.0:1
        input_placeholder_color_dark="*neutral_300",
    )


HEAD = "<title>CompStudio</title>"
