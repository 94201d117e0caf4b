import { fileDesc } from "@bufbuild/protobuf/codegenv2";
import { file_google_protobuf_descriptor } from "@bufbuild/protobuf/wkt";

/**
 * buf/validate/validate.proto as an empty file of that name (vite.config.ts puts it in place
 * of protovalidate's): the generated files import it only for the validation options of
 * their fields, which the service checks and the console never reads. protovalidate's
 * descriptor is 70 KB of the first page's JavaScript.
 */
export const file_buf_validate_validate = fileDesc(
  "ChtidWYvdmFsaWRhdGUvdmFsaWRhdGUucHJvdG8SDGJ1Zi52YWxpZGF0ZRogZ29vZ2xlL3Byb3RvYnVmL2Rlc2NyaXB0b3IucHJvdG9iBnByb3RvMg==",
  [file_google_protobuf_descriptor],
);
