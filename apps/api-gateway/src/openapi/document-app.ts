import { Module, Provider, Type } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { GATEWAY_CONTROLLERS } from '../app.module';
import { buildOpenApiDocument } from './openapi-document';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The gateway's document without its infrastructure: the same controllers, every dependency they
 * ask for stubbed (nothing is called; only the routes and their decorators are read). For
 * `npm run openapi:write` and the drift check, which need no database or broker.
 */
export async function buildDocumentOffline(): Promise<OpenAPIObject> {
  const stubs: Provider[] = [];
  const seen = new Set<unknown>();
  for (const c of GATEWAY_CONTROLLERS) {
    const deps = [...((Reflect.getMetadata('design:paramtypes', c) as unknown[]) ?? []), ...guardsOf(c)];
    const injected = (Reflect.getMetadata('self:paramtypes', c) as Array<{ index: number; param: unknown }> | undefined) ?? [];
    for (const { index, param } of injected) deps[index] = param;
    for (const d of deps) {
      if (d && !seen.has(d)) {
        seen.add(d);
        stubs.push({ provide: d as Type<unknown>, useValue: {} });
      }
    }
  }
  @Module({ controllers: [...GATEWAY_CONTROLLERS], providers: stubs })
  class DocumentModule {}
  const app = await NestFactory.create<NestFastifyApplication>(DocumentModule, new FastifyAdapter(), { logger: false, abortOnError: false });
  try {
    return buildOpenApiDocument(app, GATEWAY_CONTROLLERS);
  } finally {
    await app.close();
  }
}

/**
 * Guards named in @UseGuards are instantiated by Nest with their own dependencies: stub the guards
 * and what they depend on (Nest provides Reflector itself).
 */
function guardsOf(c: object): unknown[] {
  const guards = (Reflect.getMetadata('__guards__', c) as unknown[] | undefined) ?? [];
  const deps = guards.flatMap((g) => (Reflect.getMetadata('design:paramtypes', g as object) as unknown[] | undefined) ?? []).filter((d) => d !== Reflector);
  return [...guards, ...deps];
}
