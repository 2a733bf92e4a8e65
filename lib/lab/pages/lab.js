// trace-lab's front page: the boards table and the search across boards, each view an
// address (#boards?..., #search?...). No dependencies; served by trace-lab. The modules import
// downwards only (tests/layering fails on an import cycle); this entry composes them.
import { $ } from './dom.js';
import { currentRoute } from './route.js';
import { setupBoards, showBoards } from './boards.js';
import { setupSearch, showSearch } from './search.js';

const PAGES = { boards: showBoards, search: showSearch };

function route() {
  const { page, params } = currentRoute();
  const shown = Object.hasOwn(PAGES, page) ? page : 'boards';
  for (const name of Object.keys(PAGES)) {
    $(`page-${name}`).hidden = name !== shown;
    $(`nav-${name}`).classList.toggle('active', name === shown);
  }
  PAGES[shown](params);
}

setupBoards();
setupSearch();
window.addEventListener('hashchange', route);
route();
