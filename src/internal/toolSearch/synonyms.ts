/**
 * A small thesaurus of the words people use for what tools do and what they act on: a
 * query's words bring their kin along (at a lower weight), so "open a bug" meets
 * `create_issue` and "spin up a VM" meets `launch_instance`. General vocabulary of
 * developer, chat, CRM, cloud, calendar, mail and file tools; no tool's own name.
 *
 * @internal
 */
import { analyze } from "./terms.js"

// Each line one group of words that stand for each other in a request.
const GROUPS = `
create make add new open start spin launch setup register file generate build provision draft
delete remove destroy erase drop terminate kill discard purge trash
get fetch read retrieve show view display look see inspect describe detail info
list enumerate browse all every
update edit change modify alter rename move fix adjust patch correct
search find lookup query locate seek filter which where
send post publish tell notify message announce broadcast share
reply respond answer back
schedule plan book reserve arrange
meeting event call sync standup appointment invitation invite
issue bug ticket defect problem report incident
pull pr mr merge request
review approve feedback check
repository repo project codebase
message chat dm text conversation
direct private personal
channel room group space
user person people member teammate colleague employee someone
customer client contact account prospect buyer
deal opportunity sale
lead prospect
instance server vm machine host box node compute
bucket storage blob object
database db postgres postgresql mysql sql
function lambda serverless
file document doc
directory folder dir
email mail inbox
cost spend spending bill billing price money expense
alarm alert page monitor threshold
log logs output trace
remember memory store knowledge fact note
restore rollback recover revert undo
backup snapshot copy
permission access policy role grant allow
status presence away availability
free available slot open
compress zip gzip archive
sum add total plus calculate arithmetic
label tag category folder
archive hide
attachment attached
unread unopened unseen new
remind reminder
close resolve finish done complete
combine merge dedupe duplicate deduplicate
resize scale upgrade bigger increase ram memory cpu
stop shut shutdown halt pause
download save export
upload attach put
link url relation relate connect
rerun retry restart again
release version changelog publish
fork clone copy
lock freeze restrict
dns domain hostname record
firewall port inbound traffic
convert turn promote qualify
import bulk csv spreadsheet
sequence drip campaign automation nurture
activity timeline record history
history recent past previous earlier
forecast pipeline report summary
vacation holiday leave absence ooo
time date when
`

const groupsOf = (): Map<string, Set<string>> => {
  const kin = new Map<string, Set<string>>()
  for (const line of GROUPS.trim().split("\n")) {
    const terms = line.split(/\s+/).map(analyze).filter((term): term is string => term !== null)
    for (const term of terms) {
      const set = kin.get(term) ?? new Set<string>()
      for (const other of terms) if (other !== term) set.add(other)
      kin.set(term, set)
    }
  }
  return kin
}

const KIN = groupsOf()

/** The index terms that stand for this one in a request (none for most). */
export const kinOf = (term: string): ReadonlySet<string> => KIN.get(term) ?? new Set()
