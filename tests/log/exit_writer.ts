/**
 * @module tests/log/exit_writer
 * Child process of buffered_file_test.ts: configures a log file with a long flush interval, logs a
 * line, then leaves as told by its second argument (`exit`: Deno.exit; `throw`: an uncaught error;
 * `reject`: an unhandled rejection) without closing the log.
 */
import { parseRunFlags } from "../../lib/flags/config.ts";
import { configureLogging } from "../../lib/log/configure.ts";
import { logSettingsFromConfig } from "../../lib/flags/log_settings.ts";
import { log } from "../../lib/log/logger.ts";

const [dir, how] = Deno.args;
configureLogging(
  logSettingsFromConfig(parseRunFlags("A", [`--log_dir=${dir}`, "--logtostderr=false", "--log-flush-frequency=1h"])),
);
log.info("last words", { how });
if (how === "exit") Deno.exit(0);
if (how === "reject") Promise.reject(new Error("unhandled"));
else throw new Error("uncaught");
