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
      button.click();
      return;
    }
    if (!player || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const onControl = event.target.closest && event.target.closest('button, [role="button"], input, summary, a');
    const handled = player.key(event.key, onControl);
    if (handled) event.preventDefault();
  });
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
player.share = () => {
  const video = player.video;
  const total = span();
  if (!video || !total) return 0;
  let covered = 0;
  for (let i = 0; i < video.played.length; i++) {
    const start = Math.max(0, video.played.start(i));
    const end = Math.min(total, video.played.end(i));
    if (end > start) covered += end - start;
  }
  return Math.min(1, covered / total);
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

const highlight = () => {
  const video = player.video;
  const now = video ? video.currentTime : -1;
  for (const [button, action] of player.buttons) {
    const on = now >= action.start && now < action.end;
    button.classList.toggle('csp-now', on);
    if (on) button.setAttribute('aria-current', 'true'); else button.removeAttribute('aria-current');
  }
  const watched = root.querySelector('.csp-watched');
  if (watched) {
    const text = 'Watched ' + Math.floor(player.share() * 100 + 1e-9) + '%';
    if (watched.textContent !== text) watched.textContent = text;
  }
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
  track.style.height = (lanes * 32) + 'px';
  player.buttons = [];
  for (const action of cfg.actions) {
    const name = `${action.name} ${fmt(action.start)}–${fmt(action.end)} s`;
    const button = make('button', {type: 'button', class: 'csp-action', 'aria-label': name, title: name}, action.name);
    button.style.left = (100 * action.start / total) + '%';
    button.style.width = `max(24px, ${100 * (action.end - action.start) / total}%)`;
    button.style.top = (action.lane * 32) + 'px';
    button.dataset.index = String(action.index);
    button.addEventListener('click', () => seek(action.start));
    track.appendChild(button);
    player.buttons.push([button, action]);
  }
  scroller.appendChild(track);
  box.appendChild(scroller);
};

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
  player.cfg = cfg;
  player.video = null;
  player.buttons = [];
  player.marked = {not_in_video: new Set(), out_of_order: new Set(), missing_between: false};
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
  highlight();
};

build();
watch('value', build);
