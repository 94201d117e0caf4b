import { URL_RULES } from "../actions/target-form";

/**
 * What the provider APIs validate, checked in the form first so that a mistake shows under
 * its field. The patterns are the API's own: protovalidate's email (the HTML form's) and
 * host rules, E.164 numbers, Twilio's SIDs.
 */
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const HOST = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*|[0-9a-fA-F.]*:[0-9a-fA-F:.]*)$/;
const E164 = /^\+[1-9][0-9]{1,14}$/;

const atMost = (value: number) => ({ maxLength: { value, message: `At most ${value} characters.` } });

export const DESCRIPTION_RULES = { required: "Describe the provider: the list shows it by this.", ...atMost(200) };
export const HOST_RULES = { required: "Give the SMTP server's host.", ...atMost(253), pattern: { value: HOST, message: "A host name or IP address." } };
export const PORT_RULES = {
  validate: (port: string) => port === "" || (/^\d{1,5}$/.test(port) && Number(port) <= 65535) || "A port from 1 to 65535, or empty.",
};
export const USER_RULES = atMost(320);
export const PASSWORD_RULES = atMost(1000);
export const SENDER_ADDRESS_RULES = { required: "Give the From address.", ...atMost(254), pattern: { value: EMAIL, message: "An email address." } };
export const SENDER_NAME_RULES = atMost(200);
export const REPLY_TO_RULES = { ...atMost(254), pattern: { value: new RegExp(`^$|${EMAIL.source}`), message: "An email address, or empty." } };
export const PROVIDER_URL_RULES = { ...URL_RULES, ...atMost(1000) };
export const ACCOUNT_SID_RULES = { required: "Give the account SID.", pattern: { value: /^AC[0-9a-fA-F]{32}$/, message: "AC and 32 hexadecimal digits." } };
export const TOKEN_RULES = atMost(200);
export const SENDER_NUMBER_RULES = {
  required: "Give the number the messages come from.",
  pattern: { value: E164, message: "A number in E.164 format: + and the country code, such as +41791234567." },
};
export const SERVICE_SID_RULES = {
  required: "Give the messaging service SID.",
  pattern: { value: /^MG[0-9a-fA-F]{32}$/, message: "MG and 32 hexadecimal digits." },
};
export const TEST_EMAIL_RULES = { required: "Give the address the test goes to.", ...atMost(254), pattern: { value: EMAIL, message: "An email address." } };
export const TEST_NUMBER_RULES = { required: "Give the number the test goes to.", pattern: SENDER_NUMBER_RULES.pattern };
