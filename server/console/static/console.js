// complybox console: progressive enhancement only. Shows every <time> in
// the operator's own time zone (the page says UTC without script).
(function () {
  'use strict';
  var fmt = function (d) {
    var p = function (n) { return (n < 10 ? '0' : '') + n; };
    var off = -d.getTimezoneOffset();
    var sign = off >= 0 ? '+' : '-';
    off = Math.abs(off);
    return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + ' ' +
      p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()) +
      ' (UTC' + sign + p(Math.floor(off / 60)) + ':' + p(off % 60) + ')';
  };
  Array.prototype.forEach.call(document.querySelectorAll('time[datetime]'), function (el) {
    var d = new Date(el.getAttribute('datetime'));
    if (!isNaN(d.getTime())) {
      el.title = el.textContent;
      el.textContent = fmt(d);
    }
  });
  // Document images: a rotate button turns the image a quarter at a time
  // (a photo taken sideways); the zoom link opens it at full size.
  Array.prototype.forEach.call(document.querySelectorAll('.docs a.zoom'), function (a) {
    var img = a.querySelector('img');
    if (!img) return;
    var turn = 0;
    var b = document.createElement('button');
    b.type = 'button';
    b.className = 'rotate';
    b.textContent = 'Rotate ↻';
    b.setAttribute('aria-label', 'Rotate ' + (img.alt || 'document') + ' a quarter turn');
    b.addEventListener('click', function () {
      turn = (turn + 1) % 4;
      img.className = turn ? 'rot-' + turn * 90 : '';
      b.setAttribute('aria-pressed', turn ? 'true' : 'false');
    });
    a.after(b);
  });
})();
