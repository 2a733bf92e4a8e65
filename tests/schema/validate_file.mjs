// Validates every line of an NDJSON file against the project's record schema; for tools
// whose records need a live peer to make (eko-collect's QEMU test calls it).
// Usage: node validate_file.mjs PROJECT_ROOT FILE   (prints "N valid, M invalid"; exit 1 if any invalid)
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import fs from 'node:fs';
import path from 'node:path';

const [root, file] = process.argv.slice(2);
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(path.join(root, 'schemas/record.schema.json'), 'utf8')));
let valid = 0;
let invalid = 0;
for (const line of fs.readFileSync(file, 'utf8').split('\n').filter((l) => l)) {
  if (validate(JSON.parse(line))) {
    valid++;
  } else {
    if (invalid++ < 3) console.log(`invalid: ${line}\n  ${ajv.errorsText(validate.errors)}`);
  }
}
console.log(`${valid} valid, ${invalid} invalid`);
process.exit(invalid === 0 && valid > 0 ? 0 : 1);
