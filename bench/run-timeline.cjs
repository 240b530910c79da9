// Preloaded into a `sluice job run` by bench/gcs-cores.ts (`node --require`) to split its
// time: from the process's start to its first storage request (the listing), to its first
// object request (the second connection), and to its exit. Written to stderr as one line,
// `run-timeline {"list":ms,"firstObject":ms,"exit":ms}`. CommonJS and plain JavaScript,
// so that it loads before anything else. It wraps net.Socket#connect, which every HTTP
// request without a kept-alive connection goes through; it changes nothing else.
const net = require('node:net');

const marks = {};
let connections = 0;
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  connections++;
  if (connections === 1) marks.list = Math.round(performance.now());
  if (connections === 2) marks.firstObject = Math.round(performance.now());
  return connect.apply(this, args);
};
process.on('exit', () => {
  marks.exit = Math.round(performance.now());
  process.stderr.write(`run-timeline ${JSON.stringify(marks)}\n`);
});
