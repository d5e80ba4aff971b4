// complybox hosted verification UI: progressive enhancement only. Every
// form works without this script; it adds camera capture (getUserMedia),
// the guided liveness capture and polling while the verdict is pending.
(function () {
  'use strict';
  var body = document.body;
  var t = function (k) { return body.getAttribute('data-t-' + k) || ''; };
  var token = body.getAttribute('data-token');

  // again loads the page afresh by GET: a page that answered a form (its
  // address that form's) is then the page itself, never the form posted
  // a second time (the server sends a form's address on to the page).
  function again() { window.location.replace(window.location.href.split('#')[0]); }

  // A second tap within two seconds of a form's submission sends nothing:
  // a double tap posted it twice (the second answered 409 over the
  // waiting view). Later taps send it again, so a submission the
  // applicant stopped (Esc, a lost connection) can be made again.
  document.addEventListener('submit', function (e) {
    var f = e.target;
    var sent = Number(f.getAttribute('data-sent'));
    if (sent && Date.now() - sent < 2000) { e.preventDefault(); return; }
    f.setAttribute('data-sent', String(Date.now()));
  });
  // A step the browser restores from its back/forward cache shows the
  // state of when it was left (an upload not marked done): it loads
  // afresh. Not a verdict, whose countdown would send the applicant on
  // to the partner again, nor the waiting view, which polls by itself.
  window.addEventListener('pageshow', function (e) {
    var mode = body.getAttribute('data-mode');
    if (e.persisted && (mode === 'step' || mode === 'intro')) again();
  });

  // Put captured blobs into a file input so the form posts them as if chosen.
  function setFiles(input, blobs) {
    if (typeof DataTransfer === 'undefined') return false;
    var dt = new DataTransfer();
    blobs.forEach(function (b, i) {
      dt.items.add(new File([b], 'capture-' + (i + 1) + '.jpg', { type: 'image/jpeg' }));
    });
    input.files = dt.files;
    input.dispatchEvent(new Event('change', { bubbles: true }));
    return true;
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }

  // picked maps a file input to its preview box (below), where a photo
  // taken with the camera shows too.
  var picked = new WeakMap();

  // submitOf is the form's last submit button: the step's own.
  function submitOf(input) {
    var subs = input.form ? input.form.querySelectorAll('button[type=submit]') : [];
    return subs[subs.length - 1] || null;
  }

  function grab(video) {
    return new Promise(function (resolve) {
      var c = document.createElement('canvas');
      c.width = video.videoWidth || 640;
      c.height = video.videoHeight || 480;
      c.getContext('2d').drawImage(video, 0, 0, c.width, c.height);
      c.toBlob(function (b) { resolve(b); }, 'image/jpeg', 0.9);
    });
  }

  // camera opens a preview under input; prompts (a list) makes it a guided
  // capture of one frame per prompt, otherwise one photo. The thumbnails
  // are a status region: "Photo taken" is announced (WCAG 4.1.3). Closing
  // the camera removes the focused button, so focus moves on: to Retake
  // after a capture, back to "Use camera" after Cancel.
  function camera(input, facing, prompts, startLabel) {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) return;
    // The camera controls go after the input's label: a click inside a
    // label would open the file picker.
    var anchor = input.closest('label') || input;
    var open = el('button', 'camera-open', startLabel || t('camera'));
    open.type = 'button';
    var thumbs = el('div', 'thumbs');
    thumbs.setAttribute('role', 'status');
    anchor.after(open, thumbs);
    open.addEventListener('click', function () {
      open.disabled = true;
      navigator.mediaDevices.getUserMedia({ video: { facingMode: facing }, audio: false }).then(function (stream) {
        // The selfie preview is mirrored (as a mirror is) with a face
        // oval; a document gets a card-shaped frame. The photo taken is
        // not mirrored.
        var box = el('div', 'camera ' + (facing === 'user' ? 'mirror face' : 'doc'));
        var prompt = el('p', 'prompt');
        prompt.setAttribute('aria-live', 'polite');
        var video = el('video');
        video.setAttribute('playsinline', '');
        video.muted = true;
        video.srcObject = stream;
        video.play().catch(function () {}); // Cancel before it plays: nothing to report
        var viewport = el('div', 'viewport');
        viewport.appendChild(video);
        viewport.appendChild(el('div', 'frame'));
        var bar = null;
        if (prompts) {
          bar = el('progress');
          bar.max = prompts.length;
          bar.value = 0;
          bar.setAttribute('aria-label', t('frame').replace('%d', 1).replace('%d', prompts.length));
        }
        var row = el('div', 'row');
        var shoot = el('button', '', t('capture'));
        var cancel = el('button', 'secondary', t('cancel'));
        shoot.type = cancel.type = 'button';
        row.appendChild(shoot);
        row.appendChild(cancel);
        if (prompts) { box.appendChild(bar); box.appendChild(prompt); }
        box.appendChild(viewport);
        box.appendChild(row);
        thumbs.before(box);
        var frames = [];
        var stop = function () {
          stream.getTracks().forEach(function (tr) { tr.stop(); });
          box.remove();
          open.disabled = false;
        };
        var show = function () {
          if (!prompts) return;
          var n = Math.min(frames.length + 1, prompts.length);
          bar.value = frames.length;
          bar.setAttribute('aria-label', t('frame').replace('%d', n).replace('%d', prompts.length));
          prompt.textContent = t('frame').replace('%d', n).replace('%d', prompts.length) + ': ' + (prompts[frames.length] || '');
        };
        show();
        cancel.addEventListener('click', function () { stop(); open.focus(); });
        shoot.addEventListener('click', function () {
          grab(video).then(function (b) {
            frames.push(b);
            var img = el('img');
            img.alt = '';
            img.src = URL.createObjectURL(b);
            thumbs.appendChild(img);
            if (prompts && frames.length < prompts.length) { show(); return; }
            if (!prompts) thumbs.replaceChildren(); // the preview shows it
            setFiles(input, frames);
            stop();
            var done = el('p', 'hint', prompts ? t('frames').replace('%d', frames.length) : t('taken'));
            thumbs.appendChild(done);
            var pick = picked.get(input);
            var again = pick && pick.querySelector('button');
            (again || submitOf(input) || open).focus();
          });
        });
      }).catch(function () {
        open.remove();
        thumbs.replaceChildren(el('p', 'hint', t('denied')));
        input.focus(); // the file picker, the way that is left
      });
    });
  }

  // A preview of each chosen image (a file's name otherwise) with a
  // "retake" button that chooses again; a status region, so the choice is
  // announced.
  Array.prototype.forEach.call(document.querySelectorAll('input[type=file]'), function (input) {
    var anchor = input.closest('label') || input;
    var box = el('div', 'picked');
    box.setAttribute('role', 'status');
    box.hidden = true;
    picked.set(input, box);
    anchor.after(box);
    input.addEventListener('change', function () {
      box.replaceChildren();
      var files = Array.prototype.slice.call(input.files || []);
      box.hidden = files.length === 0;
      files.forEach(function (f) {
        if (/^image\//.test(f.type)) {
          var img = el('img');
          img.alt = t('preview');
          img.src = URL.createObjectURL(f);
          box.appendChild(img);
        }
        box.appendChild(el('span', 'name', f.name));
      });
      if (files.length) {
        var again = el('button', '', t('retake'));
        again.type = 'button';
        again.addEventListener('click', function () { input.value = ''; box.replaceChildren(); box.hidden = true; input.click(); });
        box.appendChild(again);
      }
    });
  });

  // Long lists (countries) get a search box that hides what does not
  // match, ignoring case and accents. Without script the select works.
  var fold = function (s) { return s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase(); };
  Array.prototype.forEach.call(document.querySelectorAll('select[data-search]:not([disabled])'), function (sel) {
    var q = el('input', 'country-search');
    q.type = 'search';
    q.setAttribute('aria-label', t('search'));
    q.placeholder = t('search');
    q.autocomplete = 'off';
    (sel.closest('label') || sel).before(q);
    // own is the person's own choice (or the saved value): what the list
    // goes back to when the letters typed match nothing, so that no
    // country stays chosen that a first match of fewer letters picked.
    var own = sel.value, searching = false;
    var pick = function (value) {
      if (sel.value === value) return;
      searching = true;
      sel.value = value;
      sel.dispatchEvent(new Event('change'));
      searching = false;
    };
    sel.addEventListener('change', function () { if (!searching) own = sel.value; });
    q.addEventListener('input', function () {
      var v = fold(q.value.trim());
      var first = null;
      Array.prototype.forEach.call(sel.options, function (o) {
        var show = !o.value || !v || fold(o.text).indexOf(v) >= 0 || o.value.toLowerCase() === v;
        o.hidden = !show;
        if (show && o.value && !first) first = o;
      });
      if (first && v && (sel.selectedIndex <= 0 || sel.options[sel.selectedIndex].hidden)) {
        pick(first.value);
      } else if (!first && v) {
        pick(own);
      }
    });
  });

  // The identity document's types follow its issuing country at once
  // (the page's data-doctypes table, the server's own); without script a
  // button shows the types of the country picked.
  var idf = document.getElementById('id-doc-form');
  if (idf) {
    var table = JSON.parse(idf.getAttribute('data-doctypes') || '[]');
    var csel = idf.querySelector('select[name=country]');
    var tsel = idf.querySelector('select[name=docType]');
    Array.prototype.forEach.call(idf.querySelectorAll('[data-nojs]'), function (e) { e.remove(); });
    csel.addEventListener('change', function () {
      var keep = tsel.value;
      tsel.replaceChildren();
      table.forEach(function (d) {
        if (d.countries && d.countries.indexOf(csel.value) < 0) return;
        var o = el('option', '', d.label);
        o.value = d.value;
        o.selected = d.value === keep;
        tsel.appendChild(o);
      });
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll('input[type=file][data-camera]'), function (input) {
    camera(input, input.getAttribute('data-camera') === 'user' ? 'user' : 'environment', null, null);
  });
  Array.prototype.forEach.call(document.querySelectorAll('input[type=file][data-liveness]'), function (input) {
    var n = parseInt(input.getAttribute('data-liveness'), 10) || 3;
    var prompts = [];
    for (var i = 1; i <= n; i++) prompts.push(input.getAttribute('data-prompt-' + i) || '');
    camera(input, 'user', prompts, input.getAttribute('data-start'));
  });

  // A final verdict goes back to the partner after a visible countdown
  // that the applicant can skip with Continue or turn off with "Stay on
  // this page" (WCAG 2.2.1: no timed meta refresh, a limit one can turn
  // off). Without script the button is the way back, and the countdown's
  // line stays hidden: nothing would take the applicant back.
  var countdown = document.getElementById('countdown');
  var back = document.getElementById('return');
  var stay = document.getElementById('stay');
  if (countdown && back) {
    // Once the applicant went back to the partner (the countdown, or
    // Continue), the verdict shown again in this tab (Back, restored from
    // the browser's cache or loaded anew) counts down no more: they came
    // back on purpose, and Continue is there.
    var key = 'complybox-returned-' + token;
    var returned = function () { try { return sessionStorage.getItem(key) === '1'; } catch (e) { return false; } };
    var leave = function () { try { sessionStorage.setItem(key, '1'); } catch (e) { /* private mode: no memory */ } };
    var quiet = function () {
      clearTimeout(timer);
      countdown.hidden = true;
      if (stay) stay.remove();
    };
    back.addEventListener('click', leave);
    window.addEventListener('pageshow', function (e) { if (e.persisted && returned()) quiet(); });
    countdown.hidden = false;
    var left = parseInt(countdown.getAttribute('data-seconds'), 10) || 5;
    var timer = null;
    var tick = function () {
      if (left <= 0) { leave(); window.location.assign(back.href); return; }
      countdown.textContent = left === 1 ? t('countdown-one') : t('countdown').replace('%d', left);
      left--;
      timer = setTimeout(tick, 1000);
    };
    if (stay) {
      stay.hidden = false;
      stay.addEventListener('click', function () {
        clearTimeout(timer);
        countdown.textContent = t('stayed'); // announced: the line is aria-live
        stay.remove();
        back.focus();
      });
    }
    if (returned()) quiet(); else tick();
  }

  // Waiting for the verdict: poll the state with backoff, load the page
  // again once it is there (the page then shows it). Without script a meta refresh does.
  // Neither when the applicant turned it off (?refresh=off). A company
  // waiting for its beneficial owners (data-owners-open) sees their
  // progress as it comes, as often as the meta refresh would show it
  // (every 5 s): the count and the owners' states change in place, in the
  // section's live region, so a screen reader hears them and focus stays
  // where it is. A change the page cannot show in place (the wait for the
  // owners starts or ends, a row comes or goes) reloads it.
  var waiting = document.getElementById('waiting');
  if (body.getAttribute('data-mode') === 'waiting' && window.fetch && token && waiting && waiting.getAttribute('data-refresh') !== 'off') {
    var owners = waiting.getAttribute('data-owners-open'); // null: no wait for owners
    var cap = owners === null ? 30000 : 5000;
    // shown reports whether the page shows state s, after showing the
    // owners' progress in place.
    var shown = function (s) {
      var open = s.ownersOpen == null ? null : String(s.ownersOpen);
      if (open === null || owners === null) return open === owners;
      var rows = waiting.querySelectorAll('#ubo-rows li[data-ubo]');
      var ubos = s.ubos || [];
      if (ubos.length !== rows.length) return false;
      for (var i = 0; i < ubos.length; i++) {
        if (rows[i].getAttribute('data-ubo') !== String(ubos[i].uboIndex)) return false;
      }
      if (open !== owners) {
        owners = open;
        waiting.setAttribute('data-owners-open', open);
        document.getElementById('owners-open').textContent = t('owners').replace('%d', open).replace('%d', ubos.length);
      }
      ubos.forEach(function (u, i) {
        if (rows[i].getAttribute('data-status') === u.enrollmentStatus) return;
        rows[i].setAttribute('data-status', u.enrollmentStatus);
        rows[i].querySelector('.status').textContent = t('enrollment-' + u.enrollmentStatus) || u.enrollmentStatus;
      });
      return true;
    };
    var delay = 2000;
    var poll = function () {
      fetch('/api/v1/sdk/state', { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store', referrerPolicy: 'no-referrer' })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (s) {
          if (!s || !s.inReview || !shown(s)) { again(); return; }
          delay = Math.min(delay * 1.5, cap);
          setTimeout(poll, delay);
        })
        .catch(function () { delay = Math.min(delay * 2, cap); setTimeout(poll, delay); });
    };
    setTimeout(poll, delay);
  }
})();
