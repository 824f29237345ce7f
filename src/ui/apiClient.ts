/** One entry of a REST error's details (SPEC §4). */
export interface ApiErrorDetail {
  path: string;
  message: string;
}

/** A non-2xx answer of the REST API, with its SPEC §4 error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ApiErrorDetail[],
  ) {
    super(message);
  }
}

/** A 2xx answer: status, headers and parsed JSON body (undefined for 204). */
export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** Calls Wharf's own REST API as one user; every method throws ApiError on a non-2xx answer. */
export interface ApiClient {
  request<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>>;
  get<T = any>(path: string): Promise<T>;
  post<T = any>(path: string, body?: unknown): Promise<T>;
  patch<T = any>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
}

/**
 * A client of the REST API at `baseUrl` (this process, over loopback) acting with `token`.
 * The page's request id is passed on so a page and the API calls it made share one id in the logs.
 */
export function apiClient(baseUrl: string, token: string, requestId?: string): ApiClient {
  async function request<T>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (requestId) headers['x-request-id'] = requestId;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' });
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.status < 200 || res.status > 299) {
      const error = parsed?.error ?? {};
      throw new ApiError(res.status, String(error.code ?? 'unknown'), String(error.message ?? `HTTP ${res.status}`), Array.isArray(error.details) ? error.details : []);
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }
  return {
    request,
    get: async (path) => (await request<any>('GET', path)).body,
    post: async (path, body) => (await request<any>('POST', path, body)).body,
    patch: async (path, body) => (await request<any>('PATCH', path, body)).body,
    delete: async (path) => void (await request('DELETE', path)),
  };
}

/** A path segment for an API path (names are already restricted, but a page parameter is user input). */
export function seg(value: string | number): string {
  return encodeURIComponent(String(value));
}
