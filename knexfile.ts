// Knex CLI entry point; the service itself migrates through src/db/connect.ts.
import { loadConfig } from './src/config.ts';
import { knexConfig } from './src/db/connect.ts';

export default knexConfig(loadConfig().databaseUrl);
