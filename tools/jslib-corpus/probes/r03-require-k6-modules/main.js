import * as httpNs from 'k6/http';
import httpDefault from 'k6/http';
const show = (l, v) => console.log(l + ' = ' + (typeof v === 'function' ? 'function' : v === undefined ? 'undefined' : JSON.stringify(v)));
const k6 = require('k6');
const http = require('k6/http');
show('keys(require(k6))', Object.keys(k6).sort());
show('keys(require(k6/http))', Object.keys(http).sort());
show('require(k6/http).__esModule', http.__esModule);
show('require(k6/http).default === import default', http.default === httpDefault);
show('keys(import * k6/http)', Object.keys(httpNs).sort());
show('keys(import default k6/http)', Object.keys(httpDefault).sort());
show('require twice same', require('k6/http') === http);
show('keys(require(k6/metrics))', Object.keys(require('k6/metrics')).sort());
export default function () {}
