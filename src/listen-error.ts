// Why a listener could not open at start (src/server.ts), as one line naming the variable to change: a port in use
// or forbidden (FREE_PORT, PRO_PORT, METRICS_PORT), an address not of this machine or a name that does not resolve
// (HOST). Its own file: config.ts reads the environment, this reads what listen() threw.
import { ConfigError } from './config.ts'

/**
 * The one line to print when a listener cannot open (src/server.ts): the variable to change and why, as a
 * ConfigError; undefined for an error that is not about the port or the address.
 */
export function listenError (err: unknown, variable: 'FREE_PORT' | 'PRO_PORT' | 'METRICS_PORT', port: number, host: string): ConfigError | undefined {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : ''
  switch (code) {
    case 'EADDRINUSE':
      return new ConfigError(variable, `${port}: the port is in use on ${host} (another program, or another pagecast, listens there); set ${variable} to a free port`)
    case 'EACCES':
      return new ConfigError(variable, `${port}: this user may not listen on that port; set ${variable} to a port above 1023`)
    case 'EADDRNOTAVAIL':
      return new ConfigError('HOST', `${host}: not an address of this machine; set HOST to one of its addresses (0.0.0.0: all of them, 127.0.0.1: this machine only)`)
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NONAME':
      return new ConfigError('HOST', `${host}: the name does not resolve; set HOST to an address of this machine (0.0.0.0: all of them, 127.0.0.1: this machine only)`)
    default:
      return undefined
  }
}
