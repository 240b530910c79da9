/**
 * `sluice job validate FILE...`: checks job files offline, like a compiler:
 * `FILE:LINE:COLUMN: path: message` per error and exit 1, or `FILE: ok` and exit 0.
 * `-o json|yaml` prints each file's errors as the contract's `details` array.
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

export async function validateJobFiles(files: string[]): Promise<FileValidation[]> {
  return await Promise.all(files.map(validateFile));
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
  const results = await validateJobFiles(files);
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
