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
})();
