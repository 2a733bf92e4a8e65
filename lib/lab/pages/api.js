// The lab's JSON APIs (GET only): the page's token as a Bearer header, an error answer
// ({"error": "..."}) thrown with its text.
import { pageToken } from './format.js';

export async function getJson(path, params) {
  const headers = {};
  const token = pageToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const query = params.toString();
  const response = await fetch(query ? `${path}?${query}` : path, { headers, cache: 'no-store' });
  let body = null;
  try {
    body = await response.json();
  } catch {
    throw new Error(`${path}: HTTP ${response.status} (not JSON)`);
  }
  if (!response.ok) throw new Error(`${path}: ${body && body.error ? body.error : `HTTP ${response.status}`}`);
  return body;
}
