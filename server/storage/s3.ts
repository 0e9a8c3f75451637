import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { checkKey, StorageNotFoundError, type ObjectStorage, type StoredObject } from './object-storage';

/*
 * s3://<bucket>/<prefix>?endpoint=<url>&region=<r>&force_path_style=true: any S3-compatible store (AWS S3, MinIO,
 * Ceph RGW). Credentials come the SDK's standard way (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an
 * instance role). Uploads go through lib-storage's Upload: multipart for large files, streamed, bounded memory. The
 * SDK is loaded when the store is first used, so a one-node installation never loads it.
 */

export interface S3Location {
  bucket: string;
  prefix: string;
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
}

/** Parses an s3:// STORAGE_URL; throws a message for the operator when it is not one. */
export function parseS3Url(url: string): S3Location {
  const u = new URL(url);
  if (u.protocol !== 's3:' || !u.hostname) throw new Error('STORAGE_URL: s3://<bucket>/<prefix>?endpoint=…&region=…');
  const prefix = decodeURIComponent(u.pathname).replace(/^\/+|\/+$/g, '');
  const flag = u.searchParams.get('force_path_style');
  return {
    bucket: u.hostname,
    prefix: prefix ? `${prefix}/` : '',
    endpoint: u.searchParams.get('endpoint') ?? undefined,
    region: u.searchParams.get('region') ?? process.env.AWS_REGION ?? 'us-east-1',
    forcePathStyle: flag === 'true' || flag === '1',
  };
}

type Sdk = typeof import('@aws-sdk/client-s3');

const isMissing = (e: unknown) => {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404;
};

export class S3Storage implements ObjectStorage {
  readonly kind = 's3' as const;
  private loaded: Promise<{ sdk: Sdk; client: S3Client }> | undefined;
  constructor(readonly location: S3Location) {}

  private client() {
    this.loaded ??= import('@aws-sdk/client-s3').then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        region: this.location.region,
        endpoint: this.location.endpoint,
        forcePathStyle: this.location.forcePathStyle,
        // Our objects are written once and read whole; the SDK's default request checksums are not understood by
        // every S3-compatible store, and TLS (or loopback) already guards the bytes in flight.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      }),
    }));
    return this.loaded;
  }

  private full(key: string): string {
    return this.location.prefix + checkKey(key);
  }

  async putFile(key: string, file: string): Promise<void> {
    await this.put(key, createReadStream(file));
  }

  async put(key: string, body: Buffer | string | Readable): Promise<void> {
    const { client } = await this.client();
    const { Upload } = await import('@aws-sdk/lib-storage');
    await new Upload({
      client,
      params: { Bucket: this.location.bucket, Key: this.full(key), Body: body },
      queueSize: 2,
      partSize: 8 * 1024 * 1024,
    }).done();
  }

  async get(key: string): Promise<Readable> {
    const { sdk, client } = await this.client();
    try {
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.location.bucket, Key: this.full(key) }));
      return out.Body as Readable;
    } catch (e) {
      if (isMissing(e)) throw new StorageNotFoundError(key);
      throw e;
    }
  }

  async getToFile(key: string, file: string): Promise<void> {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomUUID()}.tmp`;
    try {
      await pipeline(await this.get(key), createWriteStream(tmp));
      await fs.rename(tmp, file);
    } catch (e) {
      await fs.rm(tmp, { force: true });
      throw e;
    }
  }

  async head(key: string): Promise<StoredObject | null> {
    const { sdk, client } = await this.client();
    try {
      const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.location.bucket, Key: this.full(key) }));
      return { key, size: Number(out.ContentLength ?? 0), modified: out.LastModified ?? new Date(0) };
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.client();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.full(key) }));
  }

  async deletePrefix(prefix: string): Promise<number> {
    const { sdk, client } = await this.client();
    let batch: string[] = [];
    let n = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      await client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: this.location.bucket,
          Delete: { Objects: batch.map((k) => ({ Key: this.full(k) })), Quiet: true },
        }),
      );
      n += batch.length;
      batch = [];
    };
    for await (const o of this.list(prefix)) {
      batch.push(o.key);
      if (batch.length === 1000) await flush();
    }
    await flush();
    return n;
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const { sdk, client } = await this.client();
    let token: string | undefined;
    do {
      const out = await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: this.location.bucket,
          Prefix: this.location.prefix + prefix,
          ContinuationToken: token,
        }),
      );
      for (const o of out.Contents ?? [])
        if (o.Key)
          yield {
            key: o.Key.slice(this.location.prefix.length),
            size: Number(o.Size ?? 0),
            modified: o.LastModified ?? new Date(0),
          };
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
  }

  localPath(): undefined {
    return undefined;
  }

  async check(): Promise<void> {
    const { sdk, client } = await this.client();
    await client.send(new sdk.HeadBucketCommand({ Bucket: this.location.bucket }));
  }

  async close(): Promise<void> {
    if (this.loaded) (await this.loaded).client.destroy();
  }
}
