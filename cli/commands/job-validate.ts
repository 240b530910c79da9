/**
 * `sluice job validate FILE...`: checks job files offline, like a compiler:
 * `FILE:LINE:COLUMN: path: message` per error and exit 1, or `FILE: ok` and exit 0.
 * `-o json|yaml` prints each file's errors as the contract's `details` array. `-` is the
 * job on standard input, named `<stdin>` (also for `job apply -`: `readJobFromStdin`).
 */
import { readFile, stat } from 'node:fs/promises';
import type { ErrorDetail } from '../../shared/errors.ts';
import { MAX_JOB_FILE_BYTES, parseJobYaml } from '../../shared/job/index.ts';
import { terminalText } from '../../shared/terminal-text.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import type { CliIo, OutputFormat } from '../output.ts';
import { formatResult } from '../output.ts';

export interface FileValidation {
  file: string;
  ok: boolean;
  errors: ErrorDetail[];
}

/** How messages name the job read from standard input (`job apply -`, `job validate -`). */
export const STDIN_NAME = '<stdin>';

/**
 * The job piped on standard input for `sluice job COMMAND -`: a terminal (where nothing
 * would end the input) and empty input are usage errors.
 */
export async function readJobFromStdin(io: CliIo, command: string): Promise<string> {
  if (io.stdinIsTty)
    throw CliError.usage(
      `\`sluice job ${command} -\` reads the job from standard input: pipe the job, e.g. \`cat job.yaml | sluice job ${command} -\``,
    );
  const text = await io.readStdin();
  if (!text.trim()) throw CliError.usage('standard input was empty: expected a job (YAML or JSON)');
  return text;
}

/** Each file checked; `stdin` is the text of `-`, which may be given once. */
export async function validateJobFiles(files: string[], stdin?: string): Promise<FileValidation[]> {
  return await Promise.all(
    files.map((file) => (file === '-' ? validateText(stdin ?? '') : validateFile(file))),
  );
}

function validateText(text: string): FileValidation {
  const result = parseJobYaml(text);
  const file = STDIN_NAME;
  return result.ok ? { file, ok: true, errors: [] } : { file, ok: false, errors: result.errors };
}

async function validateFile(file: string): Promise<FileValidation> {
  let bytes: Buffer;
  try {
    const info = await stat(file);
    if (info.size > MAX_JOB_FILE_BYTES) {
      return {
        file,
        ok: false,
        errors: [{ path: '', message: `the file is ${info.size} bytes; a job file may be at most 1 MiB` }],
      };
    }
    bytes = await readFile(file);
  } catch (err) {
    return {
      file,
      ok: false,
      errors: [
        {
          path: '',
          message: `cannot read the file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        },
      ],
    };
  }
  const result = parseJobYaml(bytes);
  return result.ok ? { file, ok: true, errors: [] } : { file, ok: false, errors: result.errors };
}

export async function jobValidateAction(io: CliIo, files: string[], format: OutputFormat): Promise<void> {
  const dashes = files.filter((file) => file === '-').length;
  if (dashes > 1)
    throw CliError.usage(
      '`-` (standard input) can be given once: it holds one job (name other jobs by their files)',
    );
  const results = await validateJobFiles(files, dashes ? await readJobFromStdin(io, 'validate') : undefined);
  if (format === 'table') {
    for (const r of results) {
      // Field names and values quoted from the file: shown, never obeyed by the terminal.
      if (r.ok) io.stdout(`${terminalText(r.file)}: ok\n`);
      for (const e of r.errors) {
        const where = e.line ? `${r.file}:${e.line}:${e.column}` : r.file;
        io.stderr(terminalText(`${where}: ${e.path ? `${e.path}: ` : ''}${e.message}\n`));
      }
    }
  } else {
    io.stdout(
      formatResult(
        results.map((r) => ({ file: r.file, ok: r.ok, details: r.errors })),
        format,
      ) + '\n',
    );
  }
  const failed = results.filter((r) => !r.ok).length;
  if (failed > 0) throw new CliError(`${failed} of ${results.length} job file(s) invalid`, EXIT.error);
}
