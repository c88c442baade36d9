/**
 * Passwords for the operator CLI: from the terminal without echo (asked twice for a new
 * one), or, when standard input is not a terminal (scripts, tests), its first line.
 * A password never comes from the command line, where `ps` and shell history would show it.
 */
import { CliFailure, type CliIO } from "./io";

/** The first line of a non-terminal input (without its line end). */
function firstLine(input: CliIO["stdin"]): Promise<string> {
	return new Promise((resolve, reject) => {
		let text = "";
		const finish = (line: string) => {
			input.off("data", onData);
			input.off("end", onEnd);
			input.off("error", onError);
			input.pause();
			resolve(line.replace(/\r$/, ""));
		};
		const onData = (chunk: Buffer | string) => {
			text += chunk.toString();
			const end = text.indexOf("\n");
			if (end >= 0) finish(text.slice(0, end));
		};
		const onEnd = () => finish(text);
		const onError = (error: Error) => reject(error);
		input.on("data", onData);
		input.once("end", onEnd);
		input.once("error", onError);
		input.resume();
	});
}

/** One line typed on the terminal, not echoed. Ctrl-C or Ctrl-D on an empty line give up. */
function hiddenLine(io: CliIO, prompt: string): Promise<string> {
	const input = io.stdin;
	io.stderr.write(prompt);
	input.setRawMode?.(true);
	return new Promise((resolve, reject) => {
		let value = "";
		const done = (error: Error | null) => {
			input.off("data", onData);
			input.setRawMode?.(false);
			input.pause();
			io.stderr.write("\n");
			if (error) reject(error);
			else resolve(value);
		};
		const onData = (chunk: Buffer | string) => {
			for (const character of chunk.toString()) {
				if (character === "\r" || character === "\n") return done(null);
				if (character === "\u0003") return done(new CliFailure("interrupted; nothing changed"));
				if (character === "\u0004") {
					if (value === "") return done(new CliFailure("no password given; nothing changed"));
					continue;
				}
				if (character === "\u007f" || character === "\b") {
					value = [...value].slice(0, -1).join("");
					continue;
				}
				if (character < " ") continue;
				value += character;
			}
		};
		input.on("data", onData);
		input.resume();
	});
}

/** A password for an account: typed twice without echo on a terminal, else the first line of stdin. */
export async function readNewPassword(io: CliIO, username: string): Promise<string> {
	let password: string;
	if (io.stdin.isTTY && io.stdin.setRawMode) {
		password = await hiddenLine(io, `Password for ${username}: `);
		const again = await hiddenLine(io, "Repeat it: ");
		if (password !== again) throw new CliFailure("the two passwords differ; nothing changed");
	} else {
		password = await firstLine(io.stdin);
	}
	if (password === "")
		throw new CliFailure(
			"no password given (type it, or give it as the first line of standard input); nothing changed",
		);
	return password;
}
