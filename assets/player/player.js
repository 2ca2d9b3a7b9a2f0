// The CompStudio video player (components/player.py): runs as gr.HTML's js_on_load, with `element`, `props`
// and `watch` from Gradio. Everything is drawn with textContent (no HTML from the value), so names need no escaping.
const KEYS = __KEYS__;
const SPEEDS = __SPEEDS__;

if (!window.csPlayerInstalled) {
  window.csPlayerInstalled = true;
  window.csPlayers = new Set();
  const visible = (node) => node && node.isConnected && node.offsetParent !== null;
  const active = () => {
    const shown = [...window.csPlayers].filter((p) => visible(p.root));
    return shown.find((p) => p.root.contains(document.activeElement)) ||
      shown.find((p) => p === window.csLastPlayer) || shown[0] || null;
  };
  const byId = (id) => [...window.csPlayers].find((p) => p.root.isConnected && p.root.closest('#' + id));
  window.csPlayerShare = (id) => { const p = byId(id); return p ? p.share() : null; };
  window.csPlayerMarks = (id) => { const p = byId(id); return p ? JSON.stringify(p.marks()) : null; };
  const typing = (target) => {
    if (!target || !target.closest) return false;
    if (target.isContentEditable || target.closest('textarea, select, [contenteditable="true"]')) return true;
    if (target.tagName !== 'INPUT') return false;
    return !['checkbox', 'radio', 'button', 'submit', 'range', 'reset', 'file', 'color'].includes(target.type);
  };
  document.addEventListener('keydown', (event) => {
    const player = active();
    if ((event.ctrlKey || event.metaKey) && event.key === 'Enter') {  // submits, also while typing
      const selector = player && player.cfg && player.cfg.submit;
      const button = selector ? document.querySelector(selector) : null;
      if (!button || button.offsetParent === null || button.disabled) return;
      event.preventDefault();
      if (player && typing(event.target)) window.csFocusOnNext = player;  // the next task's player gets the keys
      button.click();
      return;
    }
    if (!player || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const onControl = event.target.closest && event.target.closest('button, [role="button"], input, summary, a');
    const handled = player.key(event.key, onControl);
    if (handled) event.preventDefault();
  });
  // the played ranges go to the server as the page goes away too (a reload, a closed tab): sendBeacon survives it
  const keepAll = () => window.csPlayers.forEach((p) => p.keepPlayed && p.keepPlayed(true));
  window.addEventListener('pagehide', keepAll);
  document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') keepAll(); });
}

const root = element;
const player = {root, cfg: null, video: null, buttons: [], marked: {not_in_video: new Set(), out_of_order: new Set(), missing_between: false}};
window.csPlayers.add(player);
root.addEventListener('pointerdown', () => { window.csLastPlayer = player; });
root.addEventListener('focusin', () => { window.csLastPlayer = player; });

const make = (tag, attrs = {}, text = null) => {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== null) node.textContent = text;
  return node;
};
const LANE = 36;  // px per timeline lane: room for a name on two lines
const fmt = (s) => (Math.round(s * 10) / 10).toString();
const speedKey = () => 'compstudio.playbackRate.' + ((player.cfg && player.cfg.user) || '');
const storedSpeed = () => {
  const value = parseFloat(localStorage.getItem(speedKey()) || '1');
  return SPEEDS.includes(value) ? value : 1;
};
const span = () => {  // the length the watch check and the axis measure: the window, else the video
  const cfg = player.cfg || {};
  const video = player.video;
  const full = video && isFinite(video.duration) && video.duration > 0 ? video.duration : (cfg.duration || 0);
  return cfg.limit ? Math.min(cfg.limit, full || cfg.limit) : full;
};
const playedRanges = () => {  // what this page played, joined with what was played before a reload (cfg.played)
  const video = player.video;
  const pairs = ((player.cfg && player.cfg.played) || []).map((r) => [r[0], r[1]]);
  if (video) for (let i = 0; i < video.played.length; i++) pairs.push([video.played.start(i), video.played.end(i)]);
  pairs.sort((a, b) => a[0] - b[0]);
  const merged = [];
  for (const [start, end] of pairs) {
    if (!(end > start)) continue;
    if (merged.length && start <= merged[merged.length - 1][1]) merged[merged.length - 1][1] = Math.max(merged[merged.length - 1][1], end);
    else merged.push([start, end]);
  }
  return merged;
};
player.share = () => {
  const video = player.video;
  const total = span();
  if (!video || !total) return 0;
  let covered = 0;
  for (const [s, e] of playedRanges()) {
    const start = Math.max(0, s);
    const end = Math.min(total, e);
    if (end > start) covered += end - start;
  }
  return Math.min(1, covered / total);
};
player.keptAt = 0;
player.keptText = '';
player.keepPlayed = (leaving) => {  // send the played ranges to be kept with the lease (components/intents/api.py)
  const keep = player.cfg && player.cfg.keep;
  if (!keep || !player.video || !player.root.isConnected) return;
  const text = JSON.stringify(playedRanges().map(([s, e]) => [Math.round(s * 1000) / 1000, Math.round(e * 1000) / 1000]));
  if (text === player.keptText || text === '[]') return;
  player.keptText = text;
  player.keptAt = Date.now();
  const body = JSON.stringify({data: [keep.item, JSON.parse(text)]});
  if (leaving && navigator.sendBeacon) navigator.sendBeacon(keep.url, new Blob([body], {type: 'application/json'}));
  else fetch(keep.url, {method: 'POST', headers: {'Content-Type': 'application/json'}, body, keepalive: true}).catch(() => {});
};
const watchWarnings = () => {  // the page's "watch first" warning goes once the watching meets the floor
  const need = player.cfg && player.cfg.need;
  if (!need || player.share() + 1e-9 < need) return;
  const scope = root.closest('[role="tabpanel"]') || document;
  scope.querySelectorAll('.cs-watch-problem').forEach((node) => {
    const line = node.closest('p') || node;
    if (!line.hidden) line.hidden = true;
  });
};
player.marks = () => ({
  not_in_video: [...player.marked.not_in_video].sort((a, b) => a - b),
  out_of_order: [...player.marked.out_of_order].sort((a, b) => a - b),
  missing_between: player.marked.missing_between,
});
const clampTime = (t) => Math.max(0, Math.min(t, span() || t));
const seek = (t) => {
  const video = player.video;
  if (!video) return;
  video.currentTime = clampTime(t);
  highlight();
};
const togglePlay = () => {
  const video = player.video;
  if (!video) return;
  if (video.paused || video.ended) {
    if (player.cfg.limit && video.currentTime >= player.cfg.limit - 0.01) return;  // the window's end: no further
    video.play().catch(() => {});
  } else video.pause();
};
const step = (frames) => {
  const video = player.video;
  if (!video || !player.cfg.fps) return;
  video.pause();
  seek(video.currentTime + frames / player.cfg.fps);
};
const jumpAction = (direction) => {
  const video = player.video;
  const actions = player.cfg.actions || [];
  if (!video || !actions.length) return;
  const now = video.currentTime;
  const starts = [...new Set(actions.map((a) => a.start))].sort((a, b) => a - b);
  const target = direction > 0 ? starts.find((s) => s > now + 0.05) : [...starts].reverse().find((s) => s < now - 0.05);
  if (target !== undefined) seek(target);
};
const toggleKeys = () => {
  const list = root.querySelector('.csp-keylist');
  const button = root.querySelector('.csp-keys');
  if (!list) return;
  list.hidden = !list.hidden;
  button.setAttribute('aria-expanded', String(!list.hidden));
};
player.key = (key, onControl) => {
  if (key === '?') { toggleKeys(); return true; }
  if (key === ' ' && onControl) return false;  // Space on a button or a box keeps its own meaning
  if ((key === 'ArrowLeft' || key === 'ArrowRight') && onControl && onControl.matches('input')) return false;
  const actionsFor = {
    ' ': togglePlay, k: togglePlay, K: togglePlay,
    j: () => player.video && seek(player.video.currentTime - 5), ArrowLeft: () => player.video && seek(player.video.currentTime - 5),
    l: () => player.video && seek(player.video.currentTime + 5), ArrowRight: () => player.video && seek(player.video.currentTime + 5),
    ',': () => step(-1), '.': () => step(1), '[': () => jumpAction(-1), ']': () => jumpAction(1),
  };
  const fn = actionsFor[key];
  if (!fn) return false;
  fn();
  return true;
};

const actionText = (action) => `${action.name} (${fmt(action.start)}–${fmt(action.end)} s)`;
const highlight = () => {
  const video = player.video;
  const now = video ? video.currentTime : -1;
  const onScreen = [];
  for (const [button, action] of player.buttons) {
    const on = now >= action.start && now < action.end;
    button.classList.toggle('csp-now', on);
    if (on) { button.setAttribute('aria-current', 'true'); onScreen.push(action); } else button.removeAttribute('aria-current');
  }
  const nowLine = root.querySelector('.csp-now-line');  // the full names, which a short bar cannot hold
  if (nowLine) {
    const text = player.pointed ? actionText(player.pointed)
      : onScreen.length ? 'Now: ' + onScreen.map(actionText).join(' · ') : '';
    if (nowLine.textContent !== text) nowLine.textContent = text;
  }
  const watched = root.querySelector('.csp-watched');
  if (watched) {
    const text = 'Watched ' + Math.floor(player.share() * 100 + 1e-9) + '%';
    if (watched.textContent !== text) watched.textContent = text;
  }
  watchWarnings();
};
const holdWindow = () => {  // planning: never past the observed window
  const video = player.video;
  const limit = player.cfg && player.cfg.limit;
  if (!video || !limit) return;
  if (video.currentTime > limit) {
    video.pause();
    video.currentTime = limit;
  }
};
const frameLoop = () => {
  const video = player.video;
  if (!video || video.paused || !video.isConnected) return;
  holdWindow();
  highlight();
  requestAnimationFrame(frameLoop);
};

const drawTimeline = (box) => {
  const cfg = player.cfg;
  const total = cfg.limit || cfg.duration || Math.max(1, ...cfg.actions.map((a) => a.end));
  const lanes = Math.max(1, ...cfg.actions.map((a) => a.lane + 1));
  const scroller = make('div', {class: 'csp-timeline', role: 'group', 'aria-label': 'Action timeline'});
  const track = make('div', {class: 'csp-track'});
  track.style.height = (lanes * LANE) + 'px';
  player.buttons = [];
  for (const action of cfg.actions) {
    const name = `${action.name} ${fmt(action.start)}–${fmt(action.end)} s`;
    const button = make('button', {type: 'button', class: 'csp-action', 'aria-label': name, title: name}, action.name);
    button.style.left = (100 * action.start / total) + '%';
    button.style.width = `max(24px, ${100 * (action.end - action.start) / total}%)`;
    button.style.top = (action.lane * LANE) + 'px';
    button.dataset.index = String(action.index);
    button.addEventListener('click', () => seek(action.start));
    const point = (on) => () => { player.pointed = on ? action : null; highlight(); };
    button.addEventListener('pointerenter', point(true));
    button.addEventListener('pointerleave', point(false));
    button.addEventListener('focus', point(true));
    button.addEventListener('blur', point(false));
    track.appendChild(button);
    player.buttons.push([button, action]);
  }
  scroller.appendChild(track);
  box.appendChild(scroller);
};

const drawNow = (box) => box.appendChild(make('p', {class: 'csp-now-line'}));

const drawMarks = (box) => {
  const cfg = player.cfg;
  const group = make('fieldset', {class: 'csp-marks'});
  group.appendChild(make('legend', {}, 'Marks from the timeline (they answer "no" for their criterion)'));
  const toggle = (label, pressed, onChange) => {
    const button = make('button', {type: 'button', class: 'csp-mark', 'aria-pressed': String(pressed)}, label);
    button.addEventListener('click', () => {
      const now = button.getAttribute('aria-pressed') !== 'true';
      button.setAttribute('aria-pressed', String(now));
      onChange(now);
    });
    return button;
  };
  for (const action of cfg.actions) {
    const row = make('div', {class: 'csp-mark-row'});
    row.appendChild(make('span', {class: 'csp-mark-name'}, `${action.index + 1}. ${action.name}`));
    for (const [kind, label] of [['not_in_video', 'not in the video'], ['out_of_order', 'out of order']]) {
      const button = toggle(label, false, (on) => {
        if (on) player.marked[kind].add(action.index); else player.marked[kind].delete(action.index);
      });
      button.setAttribute('aria-label', `${action.name}: ${label}`);
      button.dataset.mark = kind;
      row.appendChild(button);
    }
    group.appendChild(row);
  }
  const missing = toggle('An action is missing between the first and the last', false, (on) => {
    player.marked.missing_between = on;
  });
  missing.dataset.mark = 'missing_between';
  group.appendChild(missing);
  box.appendChild(group);
};

const build = () => {
  let cfg = null;
  try { cfg = JSON.parse(props.value || 'null'); } catch (error) { cfg = null; }
  const box = root.querySelector('.csp') || root;
  if (player.video) player.video.pause();
  box.replaceChildren();
  box.setAttribute('tabindex', '-1');  // Ctrl+Enter moves the focus here: the player's keys work (not a text field)
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', 'Video player');
  player.pointed = null;
  player.cfg = cfg;
  player.video = null;
  player.buttons = [];
  player.marked = {not_in_video: new Set(), out_of_order: new Set(), missing_between: false};
  player.keptText = JSON.stringify((cfg && cfg.played) || []);
  if (!cfg) return;
  box.classList.toggle('csp-with-marks', Boolean(cfg.marks));  // room for the marks: a smaller video
  if (cfg.src) {
    const base = window.location.pathname.replace(/[^/]*$/, '');
    const video = make('video', {preload: 'auto', playsinline: '', controls: '', 'aria-label': 'Video'});
    video.src = base + cfg.src;
    const speed = storedSpeed();
    video.defaultPlaybackRate = speed;
    video.playbackRate = speed;
    video.addEventListener('loadedmetadata', () => { video.playbackRate = storedSpeed(); highlight(); });
    video.addEventListener('play', () => requestAnimationFrame(frameLoop));
    for (const name of ['timeupdate', 'seeked', 'pause', 'ended']) video.addEventListener(name, () => { holdWindow(); highlight(); });
    for (const name of ['pause', 'ended']) video.addEventListener(name, () => player.keepPlayed(false));
    video.addEventListener('timeupdate', () => { if (Date.now() - player.keptAt > 3000) player.keepPlayed(false); });
    video.addEventListener('seeking', holdWindow);
    video.addEventListener('ratechange', () => {
      const select = root.querySelector('.csp-speed');
      if (select && SPEEDS.includes(video.playbackRate)) select.value = String(video.playbackRate);
    });
    player.video = video;
    box.appendChild(video);
  } else {
    // inline colours too: the scoped CSS can arrive after the first paint (axe-core once read the note unstyled)
    box.appendChild(make('p', {class: 'csp-missing', role: 'note', style: 'color: #7c2d12; background: #fff7ed'},
      '⚠️ No video file for this sequence: judge from the action timeline.'));
  }
  const bar = make('div', {class: 'csp-bar'});
  const label = make('label', {class: 'csp-speed-label'}, 'Playback speed ');
  const select = make('select', {class: 'csp-speed', 'aria-label': 'Playback speed'});
  for (const value of SPEEDS) select.appendChild(make('option', {value: String(value)}, value + '×'));
  select.value = String(storedSpeed());
  select.addEventListener('change', () => {
    const value = parseFloat(select.value);
    localStorage.setItem(speedKey(), String(value));
    if (player.video) { player.video.defaultPlaybackRate = value; player.video.playbackRate = value; }
  });
  label.appendChild(select);
  bar.appendChild(label);
  if (cfg.src) {
    bar.appendChild(make('span', {class: 'csp-watched'}, 'Watched 0%'));
    if (cfg.need) bar.appendChild(make('span', {class: 'csp-need'}, `(${Math.round(cfg.need * 100)}% needed to submit; seeking ahead does not count)`));
  }
  if (cfg.limit) bar.appendChild(make('span', {class: 'csp-need'}, `Observed window only: ${fmt(cfg.limit)} s`));
  const keys = make('button', {type: 'button', class: 'csp-keys', 'aria-expanded': 'false'}, 'Keys (?)');
  keys.addEventListener('click', toggleKeys);
  bar.appendChild(keys);
  box.appendChild(bar);
  const list = make('dl', {class: 'csp-keylist'});
  list.hidden = true;
  for (const [key, what] of KEYS) { list.appendChild(make('dt', {}, key)); list.appendChild(make('dd', {}, what)); }
  box.appendChild(list);
  drawTimeline(box);
  if (cfg.marks) drawMarks(box);
  drawNow(box);
  highlight();
  if (window.csFocusOnNext === player) {  // Ctrl+Enter sent the last task: the keys work on this one at once
    window.csFocusOnNext = null;
    box.focus({preventScroll: true});
  }
};

build();
watch('value', build);
