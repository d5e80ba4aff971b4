// complybox hosted verification UI: progressive enhancement only. Every
// form works without this script; it adds camera capture (getUserMedia),
// the guided liveness capture and polling while the verdict is pending.
(function () {
  'use strict';
  var body = document.body;
  var t = function (k) { return body.getAttribute('data-t-' + k) || ''; };
  var token = body.getAttribute('data-token');

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
  // capture of one frame per prompt, otherwise one photo.
  function camera(input, facing, prompts, startLabel) {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) return;
    // The camera controls go after the input's label: a click inside a
    // label would open the file picker.
    var anchor = input.closest('label') || input;
    var open = el('button', 'camera-open', startLabel || t('camera'));
    open.type = 'button';
    var thumbs = el('div', 'thumbs');
    anchor.after(open, thumbs);
    open.addEventListener('click', function () {
      open.disabled = true;
      navigator.mediaDevices.getUserMedia({ video: { facingMode: facing }, audio: false }).then(function (stream) {
        var box = el('div', 'camera');
        var prompt = el('p', 'prompt');
        var video = el('video');
        video.setAttribute('playsinline', '');
        video.muted = true;
        video.srcObject = stream;
        video.play();
        var row = el('div', 'row');
        var shoot = el('button', '', t('capture'));
        var cancel = el('button', 'secondary', t('cancel'));
        shoot.type = cancel.type = 'button';
        row.appendChild(shoot);
        row.appendChild(cancel);
        if (prompts) box.appendChild(prompt);
        box.appendChild(video);
        box.appendChild(row);
        thumbs.before(box);
        var frames = [];
        var stop = function () {
          stream.getTracks().forEach(function (tr) { tr.stop(); });
          box.remove();
          open.disabled = false;
        };
        var show = function () { if (prompts) prompt.textContent = prompts[frames.length] || ''; };
        show();
        cancel.addEventListener('click', stop);
        shoot.addEventListener('click', function () {
          grab(video).then(function (b) {
            frames.push(b);
            var img = el('img');
            img.alt = '';
            img.src = URL.createObjectURL(b);
            thumbs.appendChild(img);
            if (prompts && frames.length < prompts.length) { show(); return; }
            if (!prompts) thumbs.replaceChildren(img);
            setFiles(input, frames);
            stop();
            var done = el('p', 'hint', prompts ? t('frames').replace('%d', frames.length) : t('taken'));
            thumbs.appendChild(done);
          });
        });
      }).catch(function () {
        open.disabled = false;
        open.replaceWith(el('p', 'hint', t('denied')));
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
  // that the applicant can skip with the button (WCAG 2.2.1: no timed
  // meta refresh). Without script the button is the way back.
  var countdown = document.getElementById('countdown');
  var back = document.getElementById('return');
  if (countdown && back) {
    var left = parseInt(countdown.getAttribute('data-seconds'), 10) || 5;
    var tick = function () {
      if (left <= 0) { window.location.assign(back.href); return; }
      countdown.textContent = t('countdown').replace('%d', left);
      left--;
      setTimeout(tick, 1000);
    };
    tick();
  }

  // Waiting for the verdict: poll the state with backoff, reload once it
  // is there (the page then shows it). Without script a meta refresh does.
  if (body.getAttribute('data-mode') === 'waiting' && window.fetch && token) {
    var delay = 2000;
    var poll = function () {
      fetch('/api/v1/sdk/state', { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store', referrerPolicy: 'no-referrer' })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (s) {
          if (!s || !s.inReview) { window.location.reload(); return; }
          delay = Math.min(delay * 1.5, 30000);
          setTimeout(poll, delay);
        })
        .catch(function () { delay = Math.min(delay * 2, 30000); setTimeout(poll, delay); });
    };
    setTimeout(poll, delay);
  }
})();
