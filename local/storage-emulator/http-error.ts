/** An answer other than success, with the `reason` GCS puts in its error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}
