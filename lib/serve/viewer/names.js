// Names for people from the port map (trace-serve's Meta): a port's, and an id's on a port.
import { state } from './state.js';

export function portLabel(port) {
  return state.portNames[port] ? `${port} ${state.portNames[port]}` : `${port}`;
}

// A TaskIsr or marker id's name, from the port map's "names".
export function idName(port, id) {
  const names = state.portIdNames[port];
  return names ? names[id] : undefined;
}
