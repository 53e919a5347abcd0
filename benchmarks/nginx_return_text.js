// Prints FILE's bytes as the text of an nginx `return 200 '...'`: backslash
// and single quote escaped, '$' written as ${dollar} (nginx has no escape
// for '$' in a string; the config defines $dollar).
'use strict';
const text = require('fs').readFileSync(process.argv[2], 'utf8');
process.stdout.write(text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\$/g, '${dollar}'));
