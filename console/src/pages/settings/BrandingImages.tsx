import type { MessageInitShape } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { Button, FileTrigger } from "react-aria-components";
import type { RequestContextSchema } from "../../../../gen/platform/object/v3alpha/object_pb";
import type { ResolvedBrandingSettings } from "../../../../gen/platform/settings/branding/v3alpha/branding_pb";
import { PlatformBrandingSettings } from "../../../../gen/platform/settings/branding/v3alpha/branding_service_pb";
import { ApiError } from "../../components/ApiError";
import { Inherited } from "../../components/Inherited";
import { imageProblem, IMAGE_TYPES } from "./branding-image-check";

const IMAGES = [
  { image: "logo", url: "logoUrl", label: "Logo", description: "Above the sign-in form; without one, the pages show the name." },
  { image: "logo_dark", url: "logoDarkUrl", label: "Logo for dark mode", description: "Without one, dark mode shows the logo." },
  { image: "icon", url: "iconUrl", label: "Icon", description: "The browser tab's icon: a small square mark." },
  { image: "icon_dark", url: "iconDarkUrl", label: "Icon for dark mode", description: "Without one, dark mode shows the icon." },
] as const;

type Spec = (typeof IMAGES)[number];

/**
 * The logo and icon of each mode: the one in effect and where it comes from, a new one
 * uploaded (checked here first as the API checks it), this context's own one removed
 * (Reset: the parent's applies again).
 */
export function BrandingImages({
  resolved,
  mayWrite,
  ctx,
  onChange,
}: {
  resolved: ResolvedBrandingSettings;
  mayWrite: boolean;
  ctx: MessageInitShape<typeof RequestContextSchema> | undefined;
  onChange(): Promise<unknown>;
}) {
  return (
    <section aria-labelledby="images">
      <h2 id="images">Logo and icon</h2>
      <p className="muted">PNG, JPEG, WebP or SVG, at most 512 KiB. An SVG is cleaned of scripts and of references to anything outside it.</p>
      <ul className="cards">
        {IMAGES.map((spec) => (
          <BrandingImage key={spec.image} spec={spec} resolved={resolved[spec.url]} mayWrite={mayWrite} ctx={ctx} onChange={onChange} />
        ))}
      </ul>
    </section>
  );
}

function BrandingImage({
  spec,
  resolved,
  mayWrite,
  ctx,
  onChange,
}: {
  spec: Spec;
  resolved: ResolvedBrandingSettings[Spec["url"]];
  mayWrite: boolean;
  ctx: MessageInitShape<typeof RequestContextSchema> | undefined;
  onChange(): Promise<unknown>;
}) {
  const [problem, setProblem] = useState<string>();
  const upload = useMutation(PlatformBrandingSettings.method.setBrandingImage, { onSuccess: onChange });
  const remove = useMutation(PlatformBrandingSettings.method.removeBrandingImage, { onSuccess: onChange });
  const url = resolved?.value;
  const choose = async (files: FileList | null) => {
    const file = files?.[0];
    if (!file) return;
    const found = imageProblem(file);
    setProblem(found);
    remove.reset();
    if (!found) upload.mutate({ image: spec.image, content: { contentType: file.type, data: new Uint8Array(await file.arrayBuffer()) }, ctx });
  };
  const removed = upload.data?.removed ?? [];
  return (
    <li className="card">
      <h3>{spec.label}</h3>
      {url ? (
        <>
          <img className="branding-image" src={url} alt={`${spec.label} in effect`} />
          <a href={url}>
            <code>{url}</code>
          </a>
          <Inherited
            setting={spec.label.toLowerCase()}
            owner={resolved?.owner}
            mayReset={mayWrite}
            pending={remove.isPending}
            onReset={() => remove.mutate({ image: spec.image, ctx })}
          />
        </>
      ) : (
        <p className="muted">None</p>
      )}
      <p className="muted">{spec.description}</p>
      {mayWrite && (
        <FileTrigger acceptedFileTypes={IMAGE_TYPES} onSelect={(files) => void choose(files)}>
          <Button isDisabled={upload.isPending}>Upload {spec.label.toLowerCase()}…</Button>
        </FileTrigger>
      )}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <ApiError error={upload.error ?? remove.error} />
      <p role="status">{removed.length > 0 ? `Uploaded; cleaning the SVG removed: ${removed.join(", ")}.` : ""}</p>
    </li>
  );
}
