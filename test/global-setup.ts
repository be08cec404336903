/**
 * Before any test: bring dist/ up to date, so the tests that run the real command line
 * (bin/geo-sync.js runs the compiled CLI) exercise the code under test, not an older build.
 */
import { build } from '../scripts/build.mjs';

export default function setup(): void {
  build({ quiet: true });
}
